/**
 * `npm run fuzz -- [--runs N] [--seed S] [--endpoint decisions|chat|both] [--path P] [--no-shrink]`:
 * a longer fuzz campaign (test/fuzz/campaign.ts) through the facade and the HTTP surface of one
 * engine in Node, on the generated tiny-random-llama. Prints what was served and refused; on a
 * failure, fast-check's shrunk case with the seed and path that replay it, and exits 1.
 */
import { parseArgs } from 'node:util';
import { generateModels } from '../models/generate-models.ts';
import { runCampaign, type Surfaces } from '../../test/fuzz/campaign.ts';
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
  },
});
const runs = Number(values.runs);
const seed = Number(values.seed);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${values.seed}`);
const endpoints = values.endpoint === 'both' ? (['decisions', 'chat'] as const) : ([values.endpoint] as const);
for (const e of endpoints) if (e !== 'decisions' && e !== 'chat') throw new Error(`--endpoint must be decisions, chat or both, got ${e}`);

await generateModels({ only: TINY, outDir: GENERATED });
const { client } = await localClient(GENERATED, TINY);
const surfaces: Surfaces = {
  facade: (endpoint, body) => (endpoint === 'decisions' ? client.decisions.create(body as never) : client.chat.completions.create(body as never)),
  fetch: (path, init) => client.fetch(new URL(path, 'http://localhost').href, init),
};
let failed = false;
for (const endpoint of endpoints as readonly ('decisions' | 'chat')[]) {
  try {
    const r = await runCampaign(surfaces, { endpoint, runs, seed, path: values.path, probe: PROBES[endpoint], shrink: !values['no-shrink'] });
    const rate = (runs / (r.ms / 1000)).toFixed(0);
    console.log(`fuzz ${endpoint}: ${runs} bodies, seed ${seed}, ${(r.ms / 1000).toFixed(1)} s (${rate}/s); served ${r.served}; refused ${JSON.stringify(r.refused)}`);
  } catch (e) {
    failed = true;
    console.error(`fuzz ${endpoint}: FAILED (seed ${seed})\n${(e as Error).message}`);
  }
}
process.exit(failed ? 1 : 0);
