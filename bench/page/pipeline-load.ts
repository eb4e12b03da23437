/**
 * transformers.js' own start-up in the same app's place (the `load_visits` rows' second peer,
 * bench/lib/load-visit-rows.ts): the `text-generation` pipeline that `@huggingface/transformers`
 * documents, made in a worker at start-up (bench/page/pipeline-load.worker.ts) on the same ONNX
 * file as the engine's `dtype`, from the query's host, through transformers.js' own browser cache.
 * Timed from the worker's creation to ready and to its first answer (one token after the same
 * state), with `performance.now()` here as each message arrives. Exposed as `window.jevLoad`, a
 * promise, as bench/page/load.ts does.
 */
import { PEER_STATE } from './peer-state.ts';
import type { PipelineReply, PipelineRequest } from './pipeline-load.worker.ts';

const q = new URLSearchParams(location.search);
const navigationMs = performance.now();
const start = performance.now();
const worker = new Worker(new URL('./pipeline-load.worker.ts', import.meta.url), { type: 'module' });
const request: PipelineRequest = {
  model: q.get('model')!,
  host: q.get('host')!,
  dtype: q.get('dtype') ?? 'fp32',
  threads: Number(q.get('threads')) || navigator.hardwareConcurrency,
  ortBase: new URL('/ort/', location.origin).href,
  state: PEER_STATE,
};

(window as unknown as { jevLoad: Promise<unknown> }).jevLoad = new Promise((resolve, reject) => {
  let readyMs = 0;
  worker.onerror = (e) => reject(new Error(e.message));
  worker.onmessage = ({ data }: MessageEvent<PipelineReply>) => {
    if (data.kind === 'error') reject(new Error(data.message));
    else if (data.kind === 'ready') readyMs = performance.now() - start;
    else resolve({ navigationMs, readyMs, answerMs: performance.now() - start, lastLoad: null, threads: data.threads, crossOriginIsolated });
  };
  worker.postMessage(request);
});
