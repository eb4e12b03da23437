/**
 * `npm run fuzz -- [--runs N] [--seed S] [--endpoint decisions|decisions_openai|extractions|chat|all] [--path P] [--no-shrink] [--node]`:
 * a longer fuzz campaign (test/fuzz/campaign.ts) on the generated tiny-random-llama, through the
 * worker facade and the real service worker of the built playground in Chromium (browser-surfaces.ts),
 * or with `--node` through the facade and `client.fetch` of an in-process engine (about 3× faster).
 * Prints what was served and refused; on a 5xx, a hang, a page crash or any other broken rule,
 * fast-check's shrunk case with the seed and path that replay it, and exits 1.
 */
import { parseArgs } from 'node:util';
import { generateModels } from '../models/generate-models.ts';
import { facadeOf, runCampaign, type CampaignReport, type Surfaces } from '../../test/fuzz/campaign.ts';
import type { Endpoint } from '../../test/fuzz/arbitraries.ts';
import { openBrowserCampaign } from './browser-surfaces.ts';
import { PROBES } from '../../test/fuzz/probes.ts';
import { localClient } from '../../test/support/local-client.ts';
import { GENERATED, TINY } from '../../test/support/models.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
    endpoint: { type: 'string', default: 'all' },
    path: { type: 'string' },
    'no-shrink': { type: 'boolean', default: false },
    node: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
const ALL: readonly Endpoint[] = ['decisions', 'decisions_openai', 'extractions', 'chat'];
const endpoints: readonly Endpoint[] = values.endpoint === 'all' || values.endpoint === 'both' ? ALL : (values.endpoint!.split(',') as Endpoint[]);
for (const e of endpoints) if (!ALL.includes(e)) throw new Error(`--endpoint must be one of ${ALL.join(', ')} (comma-separated) or all, got ${e}`);

await generateModels({ only: TINY, outDir: GENERATED });
let run: (endpoint: Endpoint) => Promise<CampaignReport>;
let close = async () => undefined as unknown;
const shrink = !values['no-shrink'];
if (values.node) {
  const { client } = await localClient(GENERATED, TINY);
  const surfaces: Surfaces = {
    facade: facadeOf(client),
    fetch: (path, init) => client.fetch(new URL(path, 'http://localhost').href, init),
  };
  run = (endpoint) => runCampaign(surfaces, { endpoint, runs, seed, path: values.path, probe: PROBES[endpoint], shrink });
} else {
  const browser = await openBrowserCampaign(TINY, (line) => console.log(line));
  run = (endpoint) => browser.run({ endpoint, runs, seed, path: values.path, shrink });
  close = browser.close;
}
let failed = false;
for (const endpoint of endpoints) {
  try {
    const r = await run(endpoint);
    const rate = (runs / (r.ms / 1000)).toFixed(0);
    console.log(`fuzz ${endpoint} (${values.node ? 'Node' : 'Chromium'}): ${runs} bodies, seed ${seed}, ${(r.ms / 1000).toFixed(1)} s (${rate}/s); served ${r.served}; refused ${JSON.stringify(r.refused)}`);
  } catch (e) {
    failed = true;
    console.error(`fuzz ${endpoint}: FAILED (seed ${seed})\n${(e as Error).message}`);
  }
}
await close();
process.exit(failed ? 1 : 0);
