/**
 * `npm run fuzz -- [--runs N] [--seed S] [--endpoint decisions|chat|both] [--path P] [--no-shrink] [--node]`:
 * a longer fuzz campaign (test/fuzz/campaign.ts) on the generated tiny-random-llama, through the
 * worker facade and the real service worker of the built playground in Chromium (browser-surfaces.ts),
 * or with `--node` through the facade and `client.fetch` of an in-process engine (about 3× faster).
 * Prints what was served and refused; on a 5xx, a hang, a page crash or any other broken rule,
 * fast-check's shrunk case with the seed and path that replay it, and exits 1.
 */
import { parseArgs } from 'node:util';
import { generateModels } from '../models/generate-models.ts';
import { runCampaign, type CampaignReport, type Surfaces } from '../../test/fuzz/campaign.ts';
import { openBrowserCampaign } from './browser-surfaces.ts';
import { PROBES } from '../../test/fuzz/probes.ts';
import { localClient } from '../../test/support/local-client.ts';
import { GENERATED, TINY } from '../../test/support/models.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
    endpoint: { type: 'string', default: 'both' },
    path: { type: 'string' },
    'no-shrink': { type: 'boolean', default: false },
    node: { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
const endpoints = values.endpoint === 'both' ? (['decisions', 'chat'] as const) : ([values.endpoint] as const);
for (const e of endpoints) if (e !== 'decisions' && e !== 'chat') throw new Error(`--endpoint must be decisions, chat or both, got ${e}`);

await generateModels({ only: TINY, outDir: GENERATED });
let run: (endpoint: 'decisions' | 'chat') => Promise<CampaignReport>;
let close = async () => undefined as unknown;
const shrink = !values['no-shrink'];
if (values.node) {
  const { client } = await localClient(GENERATED, TINY);
  const surfaces: Surfaces = {
    facade: (endpoint, body) => (endpoint === 'decisions' ? client.decisions.create(body as never) : client.chat.completions.create(body as never)),
    fetch: (path, init) => client.fetch(new URL(path, 'http://localhost').href, init),
  };
  run = (endpoint) => runCampaign(surfaces, { endpoint, runs, seed, path: values.path, probe: PROBES[endpoint], shrink });
} else {
  const browser = await openBrowserCampaign(TINY, (line) => console.log(line));
  run = (endpoint) => browser.run({ endpoint, runs, seed, path: values.path, shrink });
  close = browser.close;
}
let failed = false;
for (const endpoint of endpoints as readonly ('decisions' | 'chat')[]) {
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
