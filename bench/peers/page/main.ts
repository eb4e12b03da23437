/**
 * The peers page: wllama (llama.cpp in wasm; it runs in its own worker, started from here) and this
 * engine (in engine workers, one per model × thread count), driven from Node through `window.peers`
 * (bench/peers/wllama-peer.ts, check-wllama.ts, profile-engine.ts).
 *
 * The page must be cross-origin isolated (served by bench/peers/serve.ts with COOP + COEP) for either
 * runtime to use more than one thread.
 */
import * as Comlink from 'comlink';
import { LogLevel, Wllama, type LoadModelParams, type RawCompletionParams } from '@wllama/wllama/esm/index.js';
import type { EngineWorkerApi } from './engine.worker.ts';

let wllama: Wllama | null = null;
let wllamaBlobUrl: string | null = null;
let wllamaBlob: Blob | null = null;
const engines = new Map<string, { worker: Worker; api: Comlink.Remote<EngineWorkerApi> }>();
const logs: string[] = [];

const quietLogger = {
  debug: () => {},
  log: () => {},
  warn: (...a: unknown[]) => logs.push(`warn: ${a.map(String).join(' ')}`),
  error: (...a: unknown[]) => {
    logs.push(`error: ${a.map(String).join(' ')}`);
    console.error(...a);
  },
};

export interface WllamaLoadOptions {
  /** URL of the .gguf (same origin). */
  url: string;
  threads: number;
  nCtx: number;
  /** Default false: llama.cpp's flash attention changes the arithmetic; off for equal work. */
  flashAttn?: boolean;
  /** KV cache type; default f32 like onnxruntime's cache. */
  cacheType?: 'f32' | 'f16';
}

const peers = {
  info() {
    return {
      crossOriginIsolated: self.crossOriginIsolated,
      hardwareConcurrency: navigator.hardwareConcurrency,
      userAgent: navigator.userAgent,
      libllama: Wllama.getLibllamaVersion?.() ?? null,
    };
  },

  async wllamaLoad(opts: WllamaLoadOptions) {
    if (wllama) await peers.wllamaExit();
    const t0 = performance.now();
    if (wllamaBlobUrl !== opts.url || !wllamaBlob) {
      const res = await fetch(opts.url);
      if (!res.ok) throw new Error(`fetch ${opts.url}: ${res.status}`);
      wllamaBlob = await res.blob();
      wllamaBlobUrl = opts.url;
    }
    const t1 = performance.now();
    wllama = new Wllama({ default: new URL('/wllama/wllama.wasm', location.href).href }, { logger: quietLogger, suppressNativeLog: false });
    const params: LoadModelParams = {
      n_threads: opts.threads,
      n_ctx: opts.nCtx,
      n_batch: 512,
      n_ubatch: 512,
      n_gpu_layers: 0,
      n_parallel: 1,
      flash_attn: opts.flashAttn ?? false,
      cache_type_k: opts.cacheType ?? 'f32',
      cache_type_v: opts.cacheType ?? 'f32',
      log_level: LogLevel.WARN,
      warmup: true,
    };
    await wllama.loadModel([new File([wllamaBlob], 'model.gguf')], params);
    const ctx = wllama.getLoadedContextInfo();
    return {
      fetch_ms: t1 - t0,
      load_ms: performance.now() - t1,
      multithread: wllama.isMultithread(),
      threads: wllama.getNumThreads(),
      n_ctx: ctx.n_ctx,
      n_vocab: ctx.n_vocab,
      n_batch: ctx.n_batch,
      add_bos: ctx.add_bos_token,
      bos: ctx.token_bos,
      eos: ctx.token_eos,
      eog: ctx.list_tokens_eog,
      params,
    };
  },

  /** One non-streamed raw completion; `wall_ms` is measured around the whole call. */
  async wllamaComplete(params: RawCompletionParams) {
    if (!wllama) throw new Error('wllama not loaded');
    const t0 = performance.now();
    const res = await wllama.createCompletion({ ...params, stream: false });
    return { wall_ms: performance.now() - t0, res };
  },

  async wllamaExit() {
    await wllama?.exit();
    wllama = null;
  },

  /** Drops the fetched GGUF blob (before loading another model). */
  wllamaForget() {
    wllamaBlob = null;
    wllamaBlobUrl = null;
  },

  async engineStart(key: string) {
    if (engines.has(key)) throw new Error(`engine ${key} already started`);
    const worker = new Worker(new URL('./engine.worker.ts', import.meta.url), { type: 'module', name: `engine-${key}` });
    const api = Comlink.wrap<EngineWorkerApi>(worker);
    engines.set(key, { worker, api });
    return await api.info();
  },

  async engineCall(key: string, method: keyof EngineWorkerApi, ...args: unknown[]): Promise<unknown> {
    const e = engines.get(key);
    if (!e) throw new Error(`no engine ${key}`);
    return await (e.api[method] as unknown as (...a: unknown[]) => Promise<unknown>)(...args);
  },

  engineStop(key: string) {
    const e = engines.get(key);
    if (!e) return;
    e.api[Comlink.releaseProxy]();
    e.worker.terminate();
    engines.delete(key);
  },

  logs(): string[] {
    return logs.splice(0);
  },
};

export type PeersPage = typeof peers;
(window as unknown as { peers: PeersPage }).peers = peers;
document.getElementById('status')!.textContent = 'peers page ready';
