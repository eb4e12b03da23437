// The fuzz corpus in Chromium: generated bodies per endpoint (RUNS_OF) (fast-check, fixed seeds) through
// the worker facade (`window.jev`) and the real service worker (`fetch` on the page's origin), with the
// rules of test/fuzz/campaign.ts: a 4xx naming a field of the body or a valid answer, both surfaces
// agreeing, the engine serving its probe unchanged, nothing hanging, nothing thrown out of the page.
import { expect, test } from './support/warm-context.ts';
import { openApp } from './reliability-support.ts';

// The two newer shapes get fewer bodies (each extraction served decodes its values): the Node
// corpus (test/fuzz/fuzz.test.ts) runs 300 of each with other seeds.
const RUNS_OF = { decisions: 2000, decisions_openai: 300, extractions: 300, chat: 2000 } as const;
const SEEDS = { decisions: 20261126, decisions_openai: 20261203, extractions: 20261204, chat: 20261127 } as const;

for (const endpoint of ['decisions', 'decisions_openai', 'extractions', 'chat'] as const) {
  const RUNS = RUNS_OF[endpoint];
  test(`fuzz: ${RUNS} generated ${endpoint} bodies through the facade and the service worker`, async ({ page }) => {
    test.setTimeout(600_000);
    const errors = await openApp(page);
    const report = await page.evaluate(
      async ({ endpoint, runs, seed }) => {
        const R = (window as any).jevReliability;
        const jev = (window as any).jev;
        const surfaces = {
          facade: R.fuzz.facadeOf(jev),
          fetch: (path: string, init: RequestInit) => fetch(path, init),
        };
        try {
          return await R.fuzz.runCampaign(surfaces, { endpoint, runs, seed, probe: R.fuzz.PROBES[endpoint] });
        } catch (e) {
          return { failure: String((e as Error).message ?? e) };
        }
      },
      { endpoint, runs: RUNS, seed: SEEDS[endpoint] },
    );
    expect((report as { failure?: string }).failure, 'a failing case, shrunk').toBeUndefined();
    const r = report as { served: number; refused: Record<string, number>; ms: number };
    console.log(`fuzz ${endpoint}: ${RUNS} bodies in ${r.ms} ms; served ${r.served}; refused ${JSON.stringify(r.refused)}`);
    expect(r.served + Object.values(r.refused).reduce((a, b) => a + b, 0)).toBe(RUNS);
    expect(r.served).toBeGreaterThan(RUNS * 0.05);
    expect(errors).toEqual([]);
  });
}
