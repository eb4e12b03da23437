// The short soak of `npm test`: the stream of `npm run soak` (scripts/soak/mix.ts: decisions of 1–16
// questions, plain and streamed chats, cancels mid-stream, bad bodies, prefix-cache hits and misses,
// a model reload) for 200 requests, one at a time, through the facade and the service worker.
// Between every two requests the engine holds no tensor but its prefix cache's, none once the cache
// is emptied, and memory (renderer RSS, the worker's heap after GC, the wasm heap) stays within a
// generous bound of its level after the warm-up; the 5 % bound over 1,000 requests and more is
// `npm run soak`'s (docs/reliability.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { openApp, unhandledIn } from './reliability-support.ts';
import { GENERATED, MIRROR } from './support/env.ts';
import { judge, type Sample } from '../scripts/soak/drift.ts';
import { memoryReader, playwrightProbe } from '../scripts/soak/memory.ts';

const MODEL = 'tiny-random-llama';

test('short soak: 200 mixed requests with a reload; no tensor beyond the prefix cache between requests, memory bounded', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = await openApp(page);
  const read = memoryReader(await playwrightProbe(page));
  const layers = (JSON.parse(readFileSync(join(GENERATED, MODEL, 'config.json'), 'utf8')) as { num_hidden_layers: number }).num_hidden_layers;
  const load = { model: MODEL, host: MIRROR, device: 'wasm', dtype: 'fp32' };
  const samples: Sample[] = [];
  const wrong: string[] = [];
  const kinds: Record<string, number> = {};
  for (let i = 0; i < 200; i += 20) {
    const steps = await page.evaluate(
      ({ load, i }) => (window as any).jevReliability.soak.soakSteps({ jev: (window as any).jev, fetch: fetch.bind(window), load, reloadEvery: 150, seed: 20261126 }, i, i + 20),
      { load, i },
    );
    for (const s of steps) {
      kinds[s.kind] = (kinds[s.kind] ?? 0) + 1;
      if (s.wrong) wrong.push(`request ${s.i} (${s.kind} via ${s.via}): ${s.wrong}`);
      if (s.live !== s.cacheEntries * 2 * layers) wrong.push(`after request ${s.i}: ${s.live} live tensors, the prefix cache's ${s.cacheEntries} entries hold ${s.cacheEntries * 2 * layers}`);
    }
    const last = steps.at(-1);
    const liveAfterClear = await page.evaluate(() => (window as any).jev.cache.clear().then(() => (window as any).jev.status()).then((s: any) => s.counters.liveTensors));
    samples.push({ i: i + 20, t: 0, ...(await read()), workerObjects: null, wasmHeap: last.wasmHeap, cacheBytes: last.cacheBytes, cacheEntries: last.cacheEntries, strayTensors: last.live - last.cacheEntries * 2 * layers, liveAfterClear });
  }
  expect(wrong).toEqual([]);
  // Every kind of the stream was sent, the reloads included.
  for (const kind of ['decision', 'chat', 'stream', 'cancel', 'bad', 'reload']) expect(kinds[kind] ?? 0, kind).toBeGreaterThan(0);
  // Levelled over requests 60–99, then compared window by window: a generous bound (a leak of one
  // buffer per request would pass 5 % within 200 requests; this catches a runaway, the soak the drift).
  const verdict = judge(samples, { warmup: 60, window: 40, bound: 0.25, bounded: ['rendererRss', 'workerHeap', 'wasmHeap'] });
  expect(verdict.problems).toEqual([]);
  expect(verdict.drift.filter((d) => d.bounded).map((d) => d.figure)).toEqual(['rendererRss', 'workerHeap', 'wasmHeap']);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});
