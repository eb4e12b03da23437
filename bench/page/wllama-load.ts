/**
 * llama.cpp's start-up in the same app's place (the `load_visits` rows' peer, bench/lib/load-visit-rows.ts):
 * wllama 3.8.1 made at start-up and its model loaded from the query's GGUF URL (`url`, the same
 * weights as the engine's ONNX file of `dtype`) through wllama's own model cache (`useCache`, the
 * browser's Origin Private File System), with `threads` threads, timed from `new Wllama()` to
 * ready and to its first answer (one token after the same state as the engine's decision), with
 * `performance.now()`. Exposed as `window.jevLoad`, a promise, as bench/page/load.ts does.
 */
import { LogLevel, Wllama } from '@wllama/wllama/esm/index.js';
import { PEER_STATE } from './peer-state.ts';

const q = new URLSearchParams(location.search);
const navigationMs = performance.now();
const start = performance.now();
const silent = { debug: () => {}, log: () => {}, warn: () => {}, error: (...a: unknown[]) => console.error(...a) };
const wllama = new Wllama({ default: new URL('/wllama/wllama.wasm', location.href).href }, { logger: silent, suppressNativeLog: true });

(window as unknown as { jevLoad: Promise<unknown> }).jevLoad = (async () => {
  await wllama.loadModelFromUrl(q.get('url')!, {
    useCache: true,
    n_threads: Number(q.get('threads')) || navigator.hardwareConcurrency,
    n_ctx: 512,
    n_batch: 512,
    n_gpu_layers: 0,
    log_level: LogLevel.WARN,
    warmup: true,
  });
  const readyMs = performance.now() - start;
  await wllama.createCompletion({ prompt: PEER_STATE, max_tokens: 1, temperature: 0, stream: false } as never);
  const answerMs = performance.now() - start;
  return { navigationMs, readyMs, answerMs, lastLoad: null, threads: wllama.getNumThreads(), crossOriginIsolated };
})();
