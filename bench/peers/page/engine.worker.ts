/// <reference lib="webworker" />
/**
 * This engine's side of the peer comparison, in a dedicated worker as the product runs it. One
 * worker per (model, threads): onnxruntime-web fixes its wasm thread count when it first
 * initialises, so a different thread count needs a fresh worker.
 *
 * Every timing is taken here with performance.now(), so the page ↔ worker hop is never measured.
 * The measured loop is the engine's own greedy chat without logprobs (src/engine/chat/chat.ts):
 * LanguageModel.forward, then the sampler at temperature 0 on the row of raw logits, read in place
 * (LanguageModel.logitsAt: no log-softmax, no copy). `profile()` is an instrumented copy of the
 * loop with logprobs (the float64 log-softmax chat takes when they are asked for), split into its
 * parts.
 */
import * as Comlink from 'comlink';
import { InferenceSession } from 'onnxruntime-web/webgpu';
import { AutoModelForCausalLM, AutoTokenizer, env, type Tensor } from '@huggingface/transformers';
import { LanguageModel } from '../../../src/engine/model/language-model.ts';
import { logSoftmax } from '../../../src/engine/model/log-softmax.ts';
import { applyRuntimeConfig, configuredOrtBuild, pinRuntimeBuild } from '../../../src/engine/load/runtime-env.ts';
import { ModelHandoff } from '../../../src/engine/load/model-handoff.ts';
import { ortBuildOfPath } from '../../../src/engine/runtime/ort-build.ts';
import { decodeSteps as splitSteps } from '../../lib/step-time.ts';
import { timeRuns } from '../../page/session-run-timer.ts';
import { attachRewrites, rewritesOn, withSessionRewrites } from '../../../src/engine/load/session-rewrites.ts';
import { argmax, sampleToken } from '../../../src/engine/chat/sampler.ts';
import { median } from '../../lib/schema.ts';
import { profileSteps } from './step-profile.ts';

/** Which onnxruntime-web wasm build to load: by default the product's choice for wasm (src/engine/runtime/ort-build.ts, pinned by pinRuntimeBuild); `plain` is its wasm-only build (`cpu`). */
export type OrtBuild = 'asyncify' | 'plain' | 'jspi';

export interface EngineLoadOptions {
  model: string;
  threads: number;
  ortBuild?: OrtBuild;
  /** Extra onnxruntime session options (graphOptimizationLevel, executionMode, extra, …). */
  sessionOptions?: Record<string, unknown>;
  /** Load a different ONNX file of the same model folder (e.g. an experimental variant); default model.onnx. */
  modelFileName?: string;
  /** Default fp32; q4 and q8 are compared with the Q4_0 / Q8_0 GGUFs of the same weights. */
  dtype?: 'fp32' | 'q4' | 'q8';
  /** The embedding and lm_head at 8 bits (LoadOptions.quantizeHead); default: as the product loads the dtype. */
  quantizeHead?: boolean;
  /**
   * false: every output copied out of wasm memory and every input copied in, as onnxruntime-web
   * does unpatched (build/ort-patch.mjs's switch held off in this worker). Default: the engine's way.
   */
  residentOutputs?: boolean;
}

let lm: LanguageModel | null = null;
/** Time inside the decoder session's run, summed (a decode step's time outside the graph is its wall time minus this). */
let runMs = 0;

/** chat.ts's greedy choice without logprobs: the sampler at temperature 0 over the last row's raw logits. */
const GREEDY = { temperature: 0, topP: 1 };
function greedyPick(logits: Tensor): number {
  return sampleToken(LanguageModel.logitsAt(logits, -1), GREEDY, noRandom);
}
function noRandom(): number {
  throw new Error('greedy: no draw');
}

function need(): LanguageModel {
  if (!lm) throw new Error('engine worker: no model loaded');
  return lm;
}


const api = {
  info() {
    return {
      crossOriginIsolated: self.crossOriginIsolated,
      hardwareConcurrency: navigator.hardwareConcurrency,
    };
  },

  /** Loads tokenizer + fp32 ONNX model on the wasm device with `threads` onnxruntime threads. */
  async load(opts: EngineLoadOptions) {
    if (opts.residentOutputs === false) Object.defineProperty(globalThis, '__ortResidentOutputs', { get: () => false, set: () => {}, configurable: true });
    const ortBase = new URL('/ort/', self.location.origin).href;
    const forced = opts.ortBuild === 'plain' ? 'cpu' : opts.ortBuild;
    applyRuntimeConfig({ ortBase, localModelPath: '/models/', threads: opts.threads, ortBuild: forced }, undefined);
    pinRuntimeBuild('wasm'); // the product's build for a wasm load, or the forced one
    const wasm = env.backends.onnx.wasm!;
    env.useBrowserCache = false;
    const t0 = performance.now();
    // As the product loads (load-model.ts), with a progress callback: without one, transformers.js
    // reads a file with Response.arrayBuffer(), which leaves a copy of the model as garbage in the
    // renderer (measured: 1526 MiB resident after the 135M fp32 load, against 1070 MiB with one).
    const progress_callback = () => {};
    const tokenizer = await AutoTokenizer.from_pretrained(opts.model, { progress_callback });
    const fromPretrained = () =>
      AutoModelForCausalLM.from_pretrained(opts.model, {
        progress_callback,
        device: 'wasm',
        dtype: opts.dtype ?? 'fp32',
        ...(opts.modelFileName ? { model_file_name: opts.modelFileName } : {}),
        ...(opts.sessionOptions ? { session_options: opts.sessionOptions } : {}),
      } as never);
    // the product's load (load-model.ts): the file handed from the fetch to onnxruntime, each weight copied into wasm memory once, the file's bytes released
    const { value: model, report: rewrites, collecting } = await withSessionRewrites(InferenceSession, fromPretrained, new ModelHandoff(), rewritesOn('wasm', opts.dtype ?? 'fp32', opts.quantizeHead));
    lm = new LanguageModel(opts.model, model, tokenizer, 'wasm', opts.dtype ?? 'fp32');
    attachRewrites(lm, rewrites);
    timeRuns(lm, (ms) => (runMs += ms));
    const ms = performance.now() - t0;
    // The product answers while the collection is prompted; its outcome is part of this report.
    await collecting;
    return {
      ortBuild: opts.ortBuild === 'plain' ? 'plain' : (ortBuildOfPath(wasm.wasmPaths) ?? configuredOrtBuild()),
      userAgent: navigator.userAgent,
      ms,
      threads: wasm.numThreads,
      crossOriginIsolated: self.crossOriginIsolated,
      contextLength: lm.contextLength,
      vocabSize: lm.vocabSize,
      kvInputs: lm.kvInputs.length,
      // What was rewritten, without the kernel itself (its memory is not the page's to copy).
      rewrites: { ...rewrites, kernelHead: rewrites.kernelHead ? { hidden: rewrites.kernelHead.hidden, embeds: rewrites.kernelHead.embeds } : null },
    };
  },

  encode(text: string, addSpecialTokens: boolean): number[] {
    return need().encode(text, addSpecialTokens);
  },

  decode(ids: number[]): string {
    return need().tokenizer.decode(ids, { skip_special_tokens: false });
  },

  /**
   * Ids whose text alone is not valid UTF-8 (byte-level pieces of a multi-byte character). llama.cpp's
   * server (in wllama 3.8.1) throws when such a piece appears among the logprobs it returns.
   */
  partialUtf8Ids(): number[] {
    const m = need();
    const out: number[] = [];
    for (let id = 0; id < m.vocabSize; id++) {
      if (m.tokenizer.decode([id], { skip_special_tokens: false }).includes('\uFFFD')) out.push(id);
    }
    return out;
  },

  /**
   * The longest prefix (in words) of `text` repeated, whose tokenization has at most `n` tokens: a
   * prompt both runtimes get as the same text (wllama takes prompts as text only).
   */
  promptText(text: string, n: number, addSpecialTokens: boolean): { text: string; tokens: number } {
    const m = need();
    const words = text.split(' ');
    const count = (k: number) => m.encode(Array.from({ length: k }, (_, i) => words[i % words.length]).join(' '), addSpecialTokens).length;
    let lo = 1;
    let hi = words.length;
    while (count(hi) <= n) hi *= 2;
    while (lo + 1 < hi) {
      const mid = (lo + hi) >> 1;
      if (count(mid) <= n) lo = mid;
      else hi = mid;
    }
    const out = Array.from({ length: lo }, (_, i) => words[i % words.length]).join(' ');
    return { text: out, tokens: count(lo) };
  },

  /** A prompt of exactly `n` token ids: `text` repeated as often as needed, then cut. */
  promptIds(text: string, n: number, addSpecialTokens: boolean): number[] {
    const m = need();
    let t = text;
    let ids = m.encode(t, addSpecialTokens);
    while (ids.length < n) {
      t += ` ${text}`;
      ids = m.encode(t, addSpecialTokens);
    }
    return ids.slice(0, n);
  },

  /**
   * Greedy continuation by the engine's loop, `steps` tokens; `banned` ids are never chosen (mirrors
   * llama.cpp's ignore_eos, which biases end-of-generation tokens to -inf for sampling only).
   * Per step: the chosen token, its log-prob, and the top-k (id, log-prob) over the full vocabulary.
   */
  async greedy(ids: number[], steps: number, banned: number[] = [], topK = 10) {
    const m = need();
    const ban = new Set(banned);
    let pass = await m.forward(ids, m.emptyCache(), 1);
    let cache = pass.cache;
    const out: { token: number; logprob: number; top: [number, number][] }[] = [];
    try {
      for (let s = 0; s < steps; s++) {
        const logp = LanguageModel.logProbsAt(pass.logits, -1);
        pass.logits.dispose();
        let best = -1;
        for (let i = 0; i < logp.length; i++) if (!ban.has(i) && (best < 0 || logp[i]! > logp[best]!)) best = i;
        const order = Array.from(logp.keys()).sort((a, b) => logp[b]! - logp[a]! || a - b).slice(0, topK);
        out.push({ token: best, logprob: logp[best]!, top: order.map((i) => [i, logp[i]!]) });
        if (s + 1 === steps) break;
        pass = await m.forward([best], cache, 1);
        cache.dispose();
        cache = pass.cache;
      }
    } finally {
      cache.dispose();
    }
    return out;
  },

  /**
   * The peer measurement: prefill `ids` (one forward pass, then the greedy pick), then decode until
   * `tokens` tokens exist (tokens − 1 single-token passes, each followed by the pick), exactly as
   * src/engine/chat/chat.ts does per token for a greedy chat without logprobs: `sampleToken` at
   * temperature 0 over the raw logits of the last position.
   */
  async bench(ids: number[], tokens: number) {
    const m = need();
    const t0 = performance.now();
    let pass = await m.forward(ids, m.emptyCache(), 1);
    let token = greedyPick(pass.logits);
    pass.logits.dispose();
    const t1 = performance.now();
    let cache = pass.cache;
    const stepMs: number[] = [];
    const stepRunMs: number[] = [];
    const generated = [token];
    try {
      while (generated.length < tokens) {
        const s0 = performance.now();
        const r0 = runMs;
        pass = await m.forward([token], cache, 1);
        cache.dispose();
        cache = pass.cache;
        token = greedyPick(pass.logits);
        pass.logits.dispose();
        generated.push(token);
        stepRunMs.push(runMs - r0);
        stepMs.push(performance.now() - s0);
      }
    } finally {
      cache.dispose();
    }
    const t2 = performance.now();
    const decodeSteps = tokens - 1;
    return {
      prompt_tokens: ids.length,
      prefill_ms: t1 - t0,
      decode_ms: t2 - t1,
      decode_steps: decodeSteps,
      prefill_tps: (ids.length * 1000) / (t1 - t0),
      decode_tps: (decodeSteps * 1000) / (t2 - t1),
      step_ms_median: median(stepMs),
      // the step's time outside the onnxruntime session's run (step-time.ts)
      ...(stepMs.length ? { steps: splitSteps(stepMs, stepRunMs) } : {}),
      generated,
    };
  },

  /** Per-token profile of the decode loop after prefilling `ids` (step-profile.ts). */
  profile(ids: number[], steps: number, trace: boolean) {
    return profileSteps(need(), ids, steps, trace);
  },

  /** Cost of the JS work alone, on synthetic data: log-softmax and argmax over `vocab` floats. */
  jsCosts(vocab: number, reps = 20) {
    const row = new Float32Array(vocab);
    for (let i = 0; i < vocab; i++) row[i] = Math.sin(i * 12.9898) * 3;
    const ls: number[] = [];
    const am: number[] = [];
    let sink = 0;
    for (let r = 0; r < reps; r++) {
      const a = performance.now();
      const lp = logSoftmax(row, 0, vocab);
      const b = performance.now();
      sink += argmax(lp);
      const c = performance.now();
      ls.push(b - a);
      am.push(c - b);
    }
    return { logsoftmax_ms: median(ls), argmax_ms: median(am), sink };
  },

  async dispose() {
    await lm?.dispose();
    lm = null;
  },
};

export type EngineWorkerApi = typeof api;
Comlink.expose(api);
