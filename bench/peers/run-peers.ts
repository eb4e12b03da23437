/**
 * Standalone runner of the wllama peer (until bench/run.ts integrates it):
 *
 *   npx tsx bench/peers/run-peers.ts [--json FILE] [--model NAME]... [--dtype fp32|q4|q8]... [--threads N]... [--reps 3]
 *                                    [--prompt 400] [--decode 64] [--max-load L [--max-wait S]]
 *                                    [--quantize-head true|false] [--no-build] [--verbose]
 *
 * Writes { peers: PeerRow[] (CONTRACT §1), details, environment } to FILE (default
 * bench-results/peers.json) and prints the rows. Models default to TinyStories-656K and
 * smollm2-135m-random (run `npm run models` first for the latter's GGUF); threads default to 1 and
 * navigator.hardwareConcurrency. With --max-load, each measurement waits (up to --max-wait seconds)
 * for the machine's 1-minute load average to drop below L: on a shared 2-core machine other processes
 * otherwise swamp the wasm threads (both runtimes spin-wait between parallel sections).
 * --quantize-head loads the engine's embedding and lm_head at 8 bits (true) or in float (false), as
 * `createClient({ quantizeHead })` does; by default as the product loads the dtype (8 bits but fp32).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { launchChromium } from './browser.ts';
import { REPO } from './serve.ts';
import type { PeerDtype } from './models.ts';
import { runWllamaPeers } from './wllama-peer.ts';

const { values } = parseArgs({
  options: {
    json: { type: 'string', default: resolve(REPO, 'bench-results/peers.json') },
    model: { type: 'string', multiple: true },
    dtype: { type: 'string', multiple: true },
    threads: { type: 'string', multiple: true },
    'quantize-head': { type: 'string' },
    reps: { type: 'string', default: '3' },
    prompt: { type: 'string', default: '400' },
    decode: { type: 'string', default: '64' },
    'max-load': { type: 'string' },
    'max-wait': { type: 'string', default: '120' },
    'no-build': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});

function quantizeHead(v: string): boolean {
  if (v !== 'true' && v !== 'false') throw new Error(`--quantize-head takes true or false, not ${v}`);
  return v === 'true';
}

const marker = `peers-${process.pid}-${Date.now()}`;
const browser = await launchChromium(marker);
try {
  const t0 = performance.now();
  const result = await runWllamaPeers(browser, {
    ...(values.model ? { models: values.model } : {}),
    ...(values.dtype ? { dtypes: values.dtype as PeerDtype[] } : {}),
    ...(values.threads ? { threads: values.threads.map(Number) } : {}),
    ...(values['quantize-head'] ? { quantizeHead: quantizeHead(values['quantize-head']) } : {}),
    reps: Number(values.reps),
    promptTokens: Number(values.prompt),
    decodeTokens: Number(values.decode),
    ...(values['max-load'] ? { maxLoad: Number(values['max-load']), maxWaitMs: Number(values['max-wait']) * 1000 } : {}),
    build: !values['no-build'],
    marker,
    verbose: values.verbose,
    log: (l) => console.log(l),
  });
  const out = { peers: result.rows, details: result.details, environment: { ...result.environment, seconds: Math.round((performance.now() - t0) / 1000) } };
  mkdirSync(dirname(values.json), { recursive: true });
  writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
  console.table(result.rows);
  console.log(`wrote ${values.json}`);
} finally {
  await browser.close();
}
