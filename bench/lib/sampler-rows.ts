/**
 * `npm run bench -- --only sampler --json FILE [--reps N]`: the time a chat step spends choosing its
 * token from one row of logits, outside the forward pass, at the vocabulary sizes of the families
 * the engine serves (SmolLM2 49,152; Llama 3 128,256; Qwen 2.5/3 151,936; Gemma 3 262,144). Node's
 * V8, the engine's own functions (src/engine/chat/sampler.ts, constraint.ts, model/log-softmax.ts),
 * on a float32 row of seeded random logits, as onnxruntime hands it over.
 *
 * The paths of `Engine.chat`, each timed in turn repetition by repetition, medians taken:
 * - `greedy`: temperature 0, the argmax of the raw row;
 * - `sampled`: temperature 1, the draw read from the raw row (no log-softmax: a softmax does not
 *   change when every value moves by one constant);
 * - `sampled_logprobs`: the same draw when the request asks for logprobs, which need the row's
 *   float64 log-softmax first. Every sampled token paid this before the raw path (2026-11-28).
 * Each also under a grammar's bitmask (`masked`), of two kinds (`mask`): `wide` allows half of the
 * row's 32-token words and a few tokens of the rest, as a JSON grammar inside a string allows most
 * of a vocabulary; `narrow` allows 4 tokens in every 512th word (about 40 of 150k), as between
 * values a grammar allows a few.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { maskLogProbs } from '../../src/engine/chat/constraint.ts';
import { argmax, maskedArgmax, sampleToken } from '../../src/engine/chat/sampler.ts';
import { logSoftmax } from '../../src/engine/model/log-softmax.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { commitId, machineDescription } from '../../scripts/machine/machine.ts';
import { round } from './measure.ts';
import { median } from './schema.ts';

export const SAMPLER_VOCABULARIES = [49_152, 128_256, 151_936, 262_144];
export const MASK_KINDS: readonly MaskKind[] = ['none', 'wide', 'narrow'];

export interface SamplerRow {
  vocabulary: number;
  path: 'greedy' | 'sampled' | 'sampled_logprobs';
  masked: boolean;
  /** Which mask (`none` when not masked): `wide` (about half the vocabulary) or `narrow` (a few tokens in a thousand words). */
  mask: MaskKind;
  /** Median milliseconds to choose one token from one row. */
  ms_per_token: number;
  /** The fastest and slowest repetition's per-token milliseconds (each repetition times `tokens` calls). */
  min_ms: number;
  max_ms: number;
  reps: number;
  tokens: number;
}

export type MaskKind = 'none' | 'wide' | 'narrow';

type Step = (row: Float32Array, mask: Int32Array | null, random: () => number) => number;

const STEPS: Record<SamplerRow['path'], Step> = {
  greedy: (row, mask) => (mask ? maskedArgmax(row, mask) : argmax(row)),
  sampled: (row, mask, random) => sampleToken(row, { temperature: 1, topP: 1 }, random, mask),
  sampled_logprobs: (row, mask, random) => {
    const logp = logSoftmax(row);
    if (mask) maskLogProbs(logp, mask);
    return sampleToken(logp, { temperature: 1, topP: 1 }, random);
  },
};

/** A row of logits and grammar-like masks of `vocabulary` tokens, from a seed. */
function rowAndMasks(vocabulary: number, seed: number): { row: Float32Array; masks: Record<MaskKind, Int32Array | null> } {
  const random = seededRandom(seed);
  const row = new Float32Array(vocabulary);
  for (let i = 0; i < vocabulary; i++) row[i] = (random() - 0.5) * 8;
  const words = Math.ceil(vocabulary / 32);
  const wide = new Int32Array(words);
  for (let w = 0; w < words; w++) wide[w] = random() < 0.5 ? -1 : random() < 0.5 ? 0 : 0x01010101;
  const narrow = new Int32Array(words);
  for (let w = 0; w < words; w += 512) narrow[w] = 0x01010101;
  return { row, masks: { none: null, wide, narrow } };
}

export function measureSampler(options: { reps: number; tokens: number; log: (...a: unknown[]) => void }): SamplerRow[] {
  const rows: SamplerRow[] = [];
  let sink = 0;
  for (const vocabulary of SAMPLER_VOCABULARIES) {
    const { row, masks } = rowAndMasks(vocabulary, vocabulary);
    const random = seededRandom(7);
    const cases = (Object.keys(STEPS) as SamplerRow['path'][]).flatMap((path) => MASK_KINDS.map((mask) => ({ path, mask, times: [] as number[] })));
    // Warm-up: every path compiled at this size before any is timed.
    for (const c of cases) for (let i = 0; i < options.tokens; i++) sink += STEPS[c.path](row, masks[c.mask], random);
    for (let r = 0; r < options.reps; r++) {
      for (const c of cases) {
        const started = performance.now();
        for (let i = 0; i < options.tokens; i++) sink += STEPS[c.path](row, masks[c.mask], random);
        c.times.push((performance.now() - started) / options.tokens);
      }
    }
    for (const c of cases) {
      const out: SamplerRow = {
        vocabulary,
        path: c.path,
        masked: c.mask !== 'none',
        mask: c.mask,
        ms_per_token: round(median(c.times), 3),
        min_ms: round(Math.min(...c.times), 3),
        max_ms: round(Math.max(...c.times), 3),
        reps: options.reps,
        tokens: options.tokens,
      };
      rows.push(out);
      options.log(`sampler V=${vocabulary} ${c.path}${c.mask === 'none' ? '' : ` masked (${c.mask})`}: ${out.ms_per_token} ms a token (${out.min_ms}–${out.max_ms})`);
    }
  }
  if (Number.isNaN(sink)) options.log('(unreachable: keeps the steps from being optimized away)');
  return rows;
}

/** The sampler rows alone, written as JSON (`npm run bench -- --only sampler --json FILE`). */
export function runSamplerOnly(json: string, log: (...a: unknown[]) => void, repo: string, reps = 15): void {
  const sampler = measureSampler({ reps, tokens: 20, log });
  const result = { schema: 'jev-bench/1', machine: machineDescription(), commit: commitId(repo), date: new Date().toISOString(), sampler };
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${json}`);
}
