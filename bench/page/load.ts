/**
 * A bench app's start-up (the `load_visits` rows, bench/lib/load-visit-rows.ts): the library's
 * client made as an app makes it, from the query (`model`, `host`, `dtype`, and `threads` where the bench sets it), the moment it is
 * ready and the moment its first answer (one decision) arrives, each timed from `createClient()`
 * with `performance.now()`, and the engine's own account of the load (`status().lastLoad`).
 * Exposed as `window.jevLoad`, a promise.
 */
import { createClient } from '../../src/client/create-client.ts';

const DECISION = { model: 'jev', state: 'The parcel arrived two weeks late and the box was crushed.', questions: { late: { type: 'noul', instructions: 'Was it late?' } } };

const q = new URLSearchParams(location.search);
const navigationMs = performance.now();
const start = performance.now();
const client = createClient({
  model: q.get('model') ?? undefined,
  host: q.get('host') ?? undefined,
  device: 'wasm',
  dtype: (q.get('dtype') as 'fp32' | null) ?? 'fp32',
  ortBase: new URL('/ort/', location.origin).href,
  share: 'tab',
  ...(q.get('threads') ? { threads: Number(q.get('threads')) } : {}),
});

(window as unknown as { jevLoad: Promise<unknown> }).jevLoad = (async () => {
  await client.ready;
  const readyMs = performance.now() - start;
  await client.decisions.create(DECISION as never);
  const answerMs = performance.now() - start;
  const status = await client.status();
  return { navigationMs, readyMs, answerMs, lastLoad: status.lastLoad ?? null, threads: status.threads, crossOriginIsolated };
})();
