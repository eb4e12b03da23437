// The fuzz corpus of `npm test` in Node: 300 generated bodies per endpoint (the Jev decisions, OpenAI's Decisions shape, extractions, chat) (fast-check, fixed seeds) through
// the facade and the HTTP surface of one engine in Node (test/fuzz/campaign.ts says what is checked).
// Longer campaigns: `npm run fuzz -- --runs N --seed S`; in Chromium: e2e/fuzz.spec.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { facadeOf, runCampaign, type Surfaces } from './campaign.ts';
import { PROBES } from './probes.ts';

const RUNS = 300; // in Node; the Chromium corpus (e2e/fuzz.spec.ts) runs 2,000 per endpoint
const SEEDS = { decisions: 20261126, decisions_openai: 20261201, extractions: 20261202, chat: 20261127 } as const;

describe('fuzz: generated bodies through the facade and the HTTP surface', () => {
  let client: JevClient;
  let surfaces: Surfaces;
  const unhandled: unknown[] = [];

  beforeAll(async () => {
    process.on('unhandledRejection', (r) => void unhandled.push(r));
    ({ client } = await localClient(GENERATED, TINY));
    surfaces = {
      facade: facadeOf(client),
      fetch: (path, init) => client.fetch(new URL(path, 'http://localhost').href, init),
    };
  });

  for (const endpoint of ['decisions', 'decisions_openai', 'extractions', 'chat'] as const) {
    it(`${RUNS} ${endpoint} bodies: each a 4xx naming a field of the body, or a valid answer; both surfaces agree; the engine keeps serving`, async () => {
      const report = await runCampaign(surfaces, { endpoint, runs: RUNS, seed: SEEDS[endpoint], probe: PROBES[endpoint] });
      const refused = Object.values(report.refused).reduce((a, b) => a + b, 0);
      expect(report.served + refused).toBe(RUNS);
      // the corpus exercises both outcomes (a generator that only produced refusals would prove little)
      expect(report.served).toBeGreaterThan(RUNS * 0.05);
      expect(refused).toBeGreaterThan(RUNS * 0.3);
      expect(unhandled).toEqual([]);
    });
  }

  it('fails on a 5xx, a param that names no field, or surfaces that disagree, and prints a reproducible case', async () => {
    // Surfaces that misbehave on purpose: the campaign must catch each, with fast-check's seed and path.
    const faulty = (fault: 'status' | 'param' | 'disagree'): Surfaces => ({
      facade: surfaces.facade,
      fetch: async (path, init) => {
        const res = await surfaces.fetch(path, init);
        if (res.ok) return res;
        const body = (await res.json()) as { error: { param: string | null } };
        if (fault === 'status') return new Response(JSON.stringify(body), { status: 500 });
        if (fault === 'param') body.error.param = 'no_such_field';
        if (fault === 'disagree') return new Response(JSON.stringify(body), { status: res.status === 400 ? 422 : 400 });
        return new Response(JSON.stringify(body), { status: res.status });
      },
    });
    for (const fault of ['status', 'param', 'disagree'] as const) {
      const run = runCampaign(faulty(fault), { endpoint: 'chat', runs: 50, seed: 1, probe: PROBES.chat, shrink: false });
      await expect(run, fault).rejects.toThrow(/seed: 1, path: "[\d:]+"/);
    }
  });
});
