/// <reference lib="webworker" />
/**
 * The bench's workloads, in a dedicated worker as the product runs its engine. Every timing is
 * taken here with performance.now(), so the page ↔ worker hop is never measured. The engine and
 * the transformers.js baselines share one loaded model (one onnxruntime session): same weights,
 * same device, same threads. The decision and chat workloads are in decision-workloads.ts and
 * chat-workloads.ts; the instruments on the loaded model in meters.ts.
 */
import * as Comlink from 'comlink';
import { env } from '@huggingface/transformers';
import { Engine } from '../../src/engine/engine.ts';
import { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import type { KvCache } from '../../src/engine/model/kv-cache.ts';
import type { DeviceChoice, DtypeChoice, EngineStatus } from '../../src/protocol/engine-api.ts';
import { configuredOrtBuild } from '../../src/engine/load/runtime-env.ts';
import type { OrtBuildChoice } from '../../src/engine/runtime/ort-build.ts';
import { LanguageModel as LM } from '../../src/engine/model/language-model.ts';
import { argmax } from '../../src/engine/chat/sampler.ts';
import { decodeSteps } from '../lib/step-time.ts';
import { chatWorkloads } from './chat-workloads.ts';
import { decisionWorkloads } from './decision-workloads.ts';
import { extractionWorkloads } from './extraction-workloads.ts';
import { installGpuMeter } from './gpu-meter.ts';
import { loaded, need, needEngine } from './loaded-model.ts';
import { instrument, meters } from './meters.ts';
import { proseOfTokens } from './texts.ts';

const gpu = installGpuMeter();
const ortBase = new URL('/ort/', self.location.origin).href;

/**
 * The browser's full version ("156.0.8078.108"): the userAgent string names only the major version
 * since Chromium's user-agent reduction ("Chrome/156.0.0.0"); User-Agent Client Hints still give it.
 */
async function chromiumFullVersion(): Promise<string | null> {
  type Brand = { brand: string; version: string };
  const ua = (navigator as unknown as { userAgentData?: { getHighEntropyValues(h: string[]): Promise<{ fullVersionList?: Brand[] }> } }).userAgentData;
  const values = await ua?.getHighEntropyValues(['fullVersionList']).catch(() => null);
  const list = values?.fullVersionList ?? [];
  return (list.find((b) => b.brand === 'Chromium') ?? list.find((b) => /Chrom/.test(b.brand)))?.version ?? null;
}

let profileBase: KvCache | null = null;
const syntheticIds = (k: number, salt = 0) => Array.from({ length: k }, (_, i) => 100 + (((i + salt) * 7919) % 5000));

const api = {
  ...decisionWorkloads,
  ...chatWorkloads,
  ...extractionWorkloads,

  info() {
    return {
      crossOriginIsolated: self.crossOriginIsolated,
      hardwareConcurrency: navigator.hardwareConcurrency,
      userAgent: navigator.userAgent,
      webgpu: 'gpu' in navigator,
    };
  },

  async adapter(): Promise<string | null> {
    const g = (navigator as unknown as { gpu?: { requestAdapter(): Promise<{ info?: { description?: string; vendor?: string; architecture?: string } } | null> } }).gpu;
    const a = g ? await g.requestAdapter().catch(() => null) : null;
    if (!a) return null;
    return [a.info?.vendor, a.info?.architecture, a.info?.description].filter(Boolean).join(' / ') || 'WebGPU adapter';
  },

  /** A full garbage collection in this worker, where Chromium runs with `--js-flags=--expose-gc` (diagnostics only). */
  collectGarbage(): boolean {
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    return gc !== undefined;
  },

  /** Loads a model into a fresh engine; the time covers fetch (or cache), parse and session creation. */
  async load(opts: { model: string; host: string; device: DeviceChoice; dtype: DtypeChoice; threads?: number; ortBuild?: OrtBuildChoice }) {
    if (loaded.engine) await loaded.lm?.dispose();
    // The product's model cache (worker/engine.worker.ts), so that loads take the product's path.
    const engine = (loaded.engine = new Engine({ runtime: { ortBase, threads: opts.threads, modelCache: new IntegrityCache(), ortBuild: opts.ortBuild } }));
    const bytes = new Map<string, number>();
    const t0 = performance.now();
    const status: EngineStatus = await engine.load({ model: opts.model, host: opts.host, device: opts.device, dtype: opts.dtype }, (e) => {
      if (e.type === 'file') bytes.set(e.file, e.total);
    });
    const ms = performance.now() - t0;
    loaded.lm = engine.languageModel;
    if (loaded.lm) instrument(loaded.lm);
    return {
      ms,
      status,
      bytes: [...bytes.values()].reduce((a, b) => a + b, 0),
      wasmThreads: env.backends.onnx?.wasm?.numThreads ?? null,
      ortBuild: configuredOrtBuild(),
      userAgent: navigator.userAgent,
      chromium: await chromiumFullVersion(),
    };
  },

  /**
   * Prefill and decode as the peer rows measure them (bench/peers/page/engine.worker.ts `bench`):
   * one pass over `ids` and the pick of the first token, then `tokens` − 1 single-token passes,
   * each followed by the engine's log-softmax and the greedy pick. Per decode step: its wall time
   * and the time inside the session's `run` (decodeSteps: the time outside the graph).
   */
  async decodeBench(ids: number[], tokens: number) {
    const m = need();
    const t0 = performance.now();
    let pass = await m.forward(ids, m.emptyCache(), 1);
    let token = argmax(LM.logProbsAt(pass.logits, -1));
    pass.logits.dispose();
    const t1 = performance.now();
    let cache = pass.cache;
    const stepMs: number[] = [];
    const stepRunMs: number[] = [];
    try {
      for (let n = 1; n < tokens; n++) {
        const s0 = performance.now();
        const r0 = meters.runMs;
        pass = await m.forward([token], cache, 1);
        cache.dispose();
        cache = pass.cache;
        token = argmax(LM.logProbsAt(pass.logits, -1));
        pass.logits.dispose();
        stepRunMs.push(meters.runMs - r0);
        stepMs.push(performance.now() - s0);
      }
    } finally {
      cache.dispose();
    }
    const t2 = performance.now();
    return { prompt_tokens: ids.length, prefill_ms: t1 - t0, decode_ms: t2 - t1, ...decodeSteps(stepMs, stepRunMs) };
  },

  /** The ids of a prose prompt of exactly `tokens` tokens (texts.ts). */
  promptIds(tokens: number, seed: number): number[] {
    const m = need();
    const text = proseOfTokens(m.tokenizer, tokens, seed).text;
    return m.encode(text, true).slice(0, tokens);
  },

  /** Keeps the loaded model's bound on the logits of one pass, or lifts it (`off`); reports the bound and the most tokens a pass then feeds. */
  logitsBound(off: boolean) {
    const m = need();
    if (off) m.logitsBudgetBytes = Infinity;
    return { budget: Number.isFinite(m.logitsBudgetBytes) ? m.logitsBudgetBytes : null, passTokens: m.passTokens() };
  },

  /** The largest logits tensor (bytes) the model returned since the last call. */
  takeLogitsPeak() {
    const peak = meters.logitsPeak;
    meters.logitsPeak = 0;
    return peak;
  },

  /** Drops the engine's prefix cache: the next request runs from cold. */
  async clearCache() {
    await needEngine().clearCache();
  },

  /**
   * Profiling aid (not part of the default run): `profilePast(k)` reads k synthetic tokens and
   * keeps their cache; `profilePass(n)` times one forward pass of n tokens over that cache.
   */
  async profilePast(past: number) {
    const m = need();
    profileBase?.dispose();
    const empty = m.emptyCache();
    if (past === 0) {
      profileBase = empty;
      return 0;
    }
    const t0 = performance.now();
    const p = await m.forward(syntheticIds(past), empty, 1);
    empty.dispose();
    p.logits.dispose();
    profileBase = p.cache;
    return performance.now() - t0;
  },

  async profilePass(n: number) {
    const m = need();
    const t0 = performance.now();
    const pass = await m.forward(syntheticIds(n, 17), profileBase!, 1);
    const ms = performance.now() - t0;
    pass.logits.dispose();
    pass.cache.dispose();
    return ms;
  },

  gpuBytes() {
    return gpu ? { live: gpu.live(), peak: gpu.peak() } : null;
  },
  gpuResetPeak() {
    gpu?.resetPeak();
  },

  async dispose() {
    await loaded.lm?.dispose();
    loaded.lm = null;
    loaded.engine = null;
  },
};

export type BenchWorker = typeof api;
Comlink.expose(api);
