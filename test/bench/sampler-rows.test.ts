import { describe, expect, it } from 'vitest';
import { MASK_KINDS, measureSampler, SAMPLER_VOCABULARIES } from '../../bench/lib/sampler-rows.ts';
import { parseBenchArgs } from '../../bench/lib/options.ts';

describe('the sampler rows (npm run bench -- --only sampler)', () => {
  it('time every path, unmasked and under each mask, at every vocabulary size, and keep their fields', () => {
    const lines: unknown[] = [];
    const rows = measureSampler({ reps: 1, tokens: 1, log: (...a) => lines.push(a.join(' ')) });
    expect(rows).toHaveLength(SAMPLER_VOCABULARIES.length * 3 * MASK_KINDS.length);
    for (const vocabulary of SAMPLER_VOCABULARIES) {
      for (const path of ['greedy', 'sampled', 'sampled_logprobs'] as const) {
        for (const mask of MASK_KINDS) {
          const row = rows.find((r) => r.vocabulary === vocabulary && r.path === path && r.mask === mask);
          expect(row, `${vocabulary} ${path} ${mask}`).toBeDefined();
          expect(row!.masked).toBe(mask !== 'none');
          expect(row!.ms_per_token).toBeGreaterThan(0);
          expect(row!.min_ms).toBeLessThanOrEqual(row!.ms_per_token);
          expect(row!.max_ms).toBeGreaterThanOrEqual(row!.ms_per_token);
          expect(row).toMatchObject({ reps: 1, tokens: 1 });
        }
      }
    }
    expect(lines).toHaveLength(rows.length);
  });

  it('--only sampler parses; an unknown section names the known ones', () => {
    expect(parseBenchArgs(['--only', 'sampler', '--json', 'x.json']).only).toBe('sampler');
    expect(() => parseBenchArgs(['--only', 'nope'])).toThrow(/known: .*sampler/);
  });
});
