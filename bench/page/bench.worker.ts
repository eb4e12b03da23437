/// <reference lib="webworker" />
/**
 * The bench's workloads, in a dedicated worker as the product runs its engine. Every timing is
 * taken here with performance.now(), so the page ↔ worker hop is never measured. The engine and
 * the transformers.js baselines share one loaded model (one onnxruntime session): same weights,
 * same device, same threads.
 */
import * as Comlink from 'comlink';
import { Tensor, TextGenerationPipeline, TextStreamer, env } from '@huggingface/transformers';
import type { ChatCompletionChunk, Question } from '../../src/contract/index.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import { promptFrame, questionBlock } from '../../src/engine/decision/decision-prompt.ts';
import { Engine } from '../../src/engine/engine.ts';
import { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import type { KvCache } from '../../src/engine/model/kv-cache.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { planQuestion } from '../../src/engine/decision/question-plan.ts';
import type { DeviceChoice, DtypeChoice, EngineStatus } from '../../src/protocol/engine-api.ts';
import { floatsOf } from '../../src/engine/runtime/float16.ts';
import { configuredOrtBuild } from '../../src/engine/load/runtime-env.ts';
import type { OrtBuildChoice } from '../../src/engine/runtime/ort-build.ts';
import { LanguageModel as LM } from '../../src/engine/model/language-model.ts';
import { argmax } from '../../src/engine/chat/sampler.ts';
import { decodeSteps } from '../lib/step-time.ts';
import { installGpuMeter } from './gpu-meter.ts';
import { maskingMs, structuredChat } from './structured-chat.ts';
import { proseOfTokens, questionPool } from './texts.ts';

const gpu = installGpuMeter();
const ortBase = new URL('/ort/', self.location.origin).href;

let engine: Engine | null = null;
let lm: LanguageModel | null = null;
let calls = 0;
const call = () => ({ id: `bench-${++calls}` });

interface DecisionSetup {
  state: string;
  questions: Question[];
  /** Per question: the text the naive way feeds after the state, and the first token of each label. */
  naive: { text: string; labelTokens: number[]; labelAnswers: string[]; answers: string[]; sameContext: boolean }[];
  prefixText: string;
  addSpecialTokens: boolean;
}
const setups = new Map<string, DecisionSetup>();

/** Time spent inside LanguageModel.forward (the onnxruntime run and its tensor copies). */
let forwardMs = 0;
/** When set, each forward pass appends [tokens fed, past length, ms]. */
let trace: [number, number, number][] | null = null;
function timeForwards(m: LanguageModel): void {
  const forward = m.forward.bind(m);
  m.forward = async (...args: Parameters<LanguageModel['forward']>) => {
    const t0 = performance.now();
    try {
      return await forward(...args);
    } finally {
      const dt = performance.now() - t0;
      forwardMs += dt;
      trace?.push([args[0].length, args[1].length, Math.round(dt)]);
    }
  };
}

/** Time inside transformers.js' model.forward (the onnxruntime run), for engine and baselines alike; and the largest logits it returned. */
let modelMs = 0;
let logitsPeak = 0;
function timeModel(m: LanguageModel): void {
  const model = m.model as unknown as { forward(inputs: unknown): Promise<unknown> };
  const forward = model.forward.bind(model);
  model.forward = async (inputs: unknown) => {
    const t0 = performance.now();
    try {
      const out = (await forward(inputs)) as { logits?: Tensor };
      if (out.logits) logitsPeak = Math.max(logitsPeak, out.logits.size * (out.logits.type === 'float16' ? 2 : 4));
      return out;
    } finally {
      modelMs += performance.now() - t0;
    }
  };
}

/**
 * Time inside the decoder session's `run` (onnxruntime-web: copying inputs in, the graph, outputs
 * out), summed over every call: a decode step's wall time minus this is its time outside the graph.
 */
let runMs = 0;
function timeRuns(m: LanguageModel): void {
  const sessions = (m.model as unknown as { sessions: Record<string, { run(...a: unknown[]): Promise<unknown> }> }).sessions;
  const session = sessions['model'] ?? sessions['decoder_model_merged'];
  if (!session) return;
  const run = session.run.bind(session);
  session.run = async (...args: unknown[]) => {
    const t0 = performance.now();
    try {
      return await run(...args);
    } finally {
      runMs += performance.now() - t0;
    }
  };
}

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

function need(): LanguageModel {
  if (!lm) throw new Error('no model loaded');
  return lm;
}

let profileBase: KvCache | null = null;
const syntheticIds = (k: number, salt = 0) => Array.from({ length: k }, (_, i) => 100 + (((i + salt) * 7919) % 5000));

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** The transcript chat-prompt.ts writes for a model without a chat template. */
function plainTranscript(messages: readonly Message[]): string {
  const parts = messages.map((m) => (m.role === 'system' ? `${m.content}\n\n` : `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}\n`));
  return parts.join('') + 'Assistant:';
}

const api = {
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
    if (engine) await lm?.dispose();
    // The product's model cache (worker/engine.worker.ts), so that loads take the product's path.
    engine = new Engine({ runtime: { ortBase, threads: opts.threads, modelCache: new IntegrityCache(), ortBuild: opts.ortBuild } });
    const bytes = new Map<string, number>();
    const t0 = performance.now();
    const status: EngineStatus = await engine.load({ model: opts.model, host: opts.host, device: opts.device, dtype: opts.dtype }, (e) => {
      if (e.type === 'file') bytes.set(e.file, e.total);
    });
    const ms = performance.now() - t0;
    lm = engine.languageModel;
    if (lm) {
      timeForwards(lm);
      timeModel(lm);
      timeRuns(lm);
    }
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
        const r0 = runMs;
        pass = await m.forward([token], cache, 1);
        cache.dispose();
        cache = pass.cache;
        token = argmax(LM.logProbsAt(pass.logits, -1));
        pass.logits.dispose();
        stepRunMs.push(runMs - r0);
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

  /** Builds a state of exactly `stateTokens` tokens and the question pool; reports token counts. */
  setupDecisions(key: string, stateTokens: number, seed: number) {
    const m = need();
    const state = proseOfTokens(m.tokenizer, stateTokens, seed);
    const questions = questionPool();
    const frame = promptFrame(m, state.text);
    const prefixIds = m.encode(frame.prefix, frame.addSpecialTokens);
    let rows = 0;
    const naive = questions.map((q) => {
      const plan = planQuestion(m, frame, q);
      rows += plan.scoring.rows.length;
      const block = questionBlock(q);
      // What a transformers.js user feeds: the whole prompt as one string, up to where the answer starts.
      const text = frame.prefix + block.text + frame.tail;
      const ids = m.encode(text, frame.addSpecialTokens);
      const expected = [...prefixIds, ...plan.promptIds];
      const sameContext = ids.length === expected.length && ids.every((t, i) => t === expected[i]);
      return {
        text,
        labelTokens: plan.paths.map((p) => p[0]!),
        labelAnswers: plan.labels.map((l) => l.answer),
        answers: plan.answers,
        sameContext,
      };
    });
    setups.set(key, { state: state.text, questions, naive, prefixText: frame.prefix, addSpecialTokens: frame.addSpecialTokens });
    const firstTokensDistinct = naive.every((n) => new Set(n.labelTokens).size === n.labelTokens.length);
    return {
      stateTokens: state.tokens,
      prefixTokens: prefixIds.length,
      questionTokens: naive.map((n) => m.encode(n.text, setups.get(key)!.addSpecialTokens).length - prefixIds.length),
      rows,
      firstTokensDistinct,
      sameContext: naive.filter((n) => n.sameContext).length,
    };
  },

  /**
   * One decision request of `q` questions of the pool (from `from` on), through Engine.decide
   * (validation included). The prefix cache is cleared first, so that the request runs from cold,
   * unless `keep` (the prefix-cache rows measure a request that finds its state cached).
   */
  async engineDecision(key: string, q: number, options: { keep?: boolean; from?: number } = {}) {
    const m = need();
    const s = setups.get(key)!;
    const questions: Record<string, Question> = {};
    const from = options.from ?? 0;
    s.questions.slice(from, from + q).forEach((question, i) => (questions[`q${from + i}`] = question));
    if (!options.keep) await engine!.clearCache();
    const cached0 = (await engine!.status()).prefixCache.cachedTokens;
    const fed0 = m.tokensFed;
    const calls0 = m.forwardCalls;
    const f0 = forwardMs;
    const passTrace: [number, number, number][] = [];
    trace = passTrace;
    const t0 = performance.now();
    const res = await engine!.decide({ model: 'jev', state: s.state, questions }, call()).finally(() => (trace = null));
    const ms = performance.now() - t0;
    const forward_ms = forwardMs - f0;
    const probs = Object.values(res.answers).map((a) =>
      a.type === 'noul' ? { true: a.noul, false: 1 - a.noul } : (a.probabilities as Record<string, number>),
    );
    const tokens = m.tokensFed - fed0;
    const passes = m.forwardCalls - calls0;
    const cached_tokens = (await engine!.status()).prefixCache.cachedTokens - cached0;
    return { ms, forward_ms, tokens, passes, cached_tokens, probs, trace: passTrace };
  },

  /**
   * The naive way, one question: tokenize state + question as one prompt, run the model on it
   * (`await model(inputs)`), read the last position's logits, softmax, sum the label tokens.
   * A request of Q questions is Q such passes in a row; nothing is kept between them, so the
   * runner times each pass on its own (and reads the CPU time the browser got for it).
   */
  async naivePass(key: string, index: number) {
    const m = need();
    const s = setups.get(key)!;
    const n = s.naive[index]!;
    const t0 = performance.now();
    const inputs = m.tokenizer(n.text, { add_special_tokens: s.addSpecialTokens }) as unknown as Record<string, Tensor>;
    const tokens = inputs['input_ids']!.dims.at(-1)!;
    const out = (await m.model(inputs)) as unknown as { logits: Tensor };
    const [, len, vocab] = out.logits.dims as [number, number, number];
    // floatsOf: fp16 and q4f16 logits are float16 data, never to be read as float32.
    const row = floatsOf(out.logits, (len - 1) * vocab, vocab);
    let max = -Infinity;
    for (let i = 0; i < vocab; i++) if (row[i]! > max) max = row[i]!;
    let z = 0;
    for (let i = 0; i < vocab; i++) z += Math.exp(row[i]! - max);
    const mass: Record<string, number> = {};
    for (const a of n.answers) mass[a] = 0;
    n.labelTokens.forEach((t, i) => (mass[n.labelAnswers[i]!]! += Math.exp(row[t]! - max) / z));
    const total = Object.values(mass).reduce((a, b) => a + b, 0);
    for (const a of n.answers) mass[a]! /= total;
    return { ms: performance.now() - t0, tokens, probs: mass, sameContext: n.sameContext };
  },

  /** A user message of about `tokens` tokens (its own text, without the template). */
  userText(tokens: number, seed: number): string {
    return proseOfTokens(need().tokenizer, tokens, seed).text;
  },

  /** Streams a greedy completion through the engine from cold (prefix cache cleared); times the first content chunk and the end. */
  async engineChat(messages: { role: 'system' | 'user' | 'assistant'; content: string }[], maxNew: number) {
    await engine!.clearCache();
    let first = -1;
    let runAtFirst = 0;
    let chunks = 0;
    const m0 = modelMs;
    const t0 = performance.now();
    const res = await engine!.chat(
      { model: 'jev', messages, max_tokens: maxNew, temperature: 0, stream: true },
      call(),
      (chunk: ChatCompletionChunk) => {
        if (chunk.choices[0]?.delta?.content) {
          if (first < 0) {
            first = performance.now();
            runAtFirst = runMs;
          }
          chunks++;
        }
      },
    );
    const end = performance.now();
    const n = res.usage.completion_tokens;
    if (first < 0) {
      first = end;
      runAtFirst = runMs;
    }
    // The decode after the first token: its wall time, and the part of it inside the session's run.
    const decodeWallMs = end - first;
    const decodeRunMs = runMs - runAtFirst;
    return {
      decode_wall_ms: decodeWallMs,
      decode_run_ms: decodeRunMs,
      decode_steps: Math.max(0, n - 1),
      ttft_ms: first - t0,
      total_ms: end - t0,
      tokens: n,
      decode_tps: n > 1 && end > first ? ((n - 1) * 1000) / (end - first) : null,
      prompt_tokens: res.usage.prompt_tokens,
      cached_tokens: res.usage.prompt_tokens_details?.cached_tokens ?? 0,
      chunks,
      model_ms: modelMs - m0,
      text: res.choices[0]!.message.content,
    };
  },

  /** The same through transformers.js' text-generation pipeline with a TextStreamer, greedy. */
  async baselineChat(messages: { role: 'system' | 'user' | 'assistant'; content: string }[], maxNew: number) {
    const m = need();
    const pipe = new TextGenerationPipeline({ task: 'text-generation', model: m.model, tokenizer: m.tokenizer } as never);
    let first = -1;
    let n = 0;
    const streamer = new TextStreamer(m.tokenizer, {
      skip_prompt: true,
      callback_function: () => {},
      token_callback_function: () => {
        if (first < 0) first = performance.now();
        n++;
      },
    });
    // Chat models get the messages (the pipeline applies the template); a model without a
    // template gets the same plain transcript the engine writes (src/engine/chat/chat-prompt.ts).
    const template = (m.tokenizer as unknown as { chat_template?: unknown }).chat_template;
    const input = typeof template === 'string' && template ? messages : plainTranscript(messages);
    const extra = typeof input === 'string' ? { add_special_tokens: true } : {};
    const m0 = modelMs;
    const t0 = performance.now();
    const out = (await pipe(input as never, { max_new_tokens: maxNew, do_sample: false, streamer, return_full_text: false, ...extra } as never)) as unknown as {
      generated_text: { role: string; content: string }[] | string;
    }[];
    const end = performance.now();
    if (first < 0) first = end;
    const g = out[0]!.generated_text;
    const text = Array.isArray(g) ? (g.at(-1)?.content ?? '') : g;
    const prompt = chatPromptIds(m, messages as never);
    return {
      ttft_ms: first - t0,
      total_ms: end - t0,
      tokens: n,
      decode_tps: n > 1 && end > first ? ((n - 1) * 1000) / (end - first) : null,
      prompt_tokens: prompt.length,
      model_ms: modelMs - m0,
      text,
    };
  },

  /** A greedy streamed chat from cold under `responseFormat` (null: none), with the grammar's share timed (structured-chat.ts). */
  structuredChat(messages: Message[], maxNew: number, responseFormat: unknown | null) {
    return structuredChat(engine!, call().id, messages, maxNew, responseFormat, () => forwardMs);
  },

  /** Milliseconds of masking one step's logits (maskedArgmax) on the last constrained run's masks. */
  maskingMs() {
    return maskingMs(need().vocabSize);
  },

  /** Keeps the loaded model's bound on the logits of one pass, or lifts it (`off`); reports the bound and the most tokens a pass then feeds. */
  logitsBound(off: boolean) {
    const m = need();
    if (off) m.logitsBudgetBytes = Infinity;
    return { budget: Number.isFinite(m.logitsBudgetBytes) ? m.logitsBudgetBytes : null, passTokens: m.passTokens() };
  },

  /** The largest logits tensor (bytes) the model returned since the last call. */
  takeLogitsPeak() {
    const peak = logitsPeak;
    logitsPeak = 0;
    return peak;
  },

  /** Drops the engine's prefix cache: the next request runs from cold. */
  async clearCache() {
    await engine!.clearCache();
  },

  /** Time of one engine chat call that writes a single token (prefill + one step), with whatever the prefix cache holds. */
  async engineFirstToken(messages: { role: 'system' | 'user' | 'assistant'; content: string }[]) {
    const t0 = performance.now();
    const res = await engine!.chat({ model: 'jev', messages, max_tokens: 1, temperature: 0 }, call());
    return {
      ms: performance.now() - t0,
      prompt_tokens: res.usage.prompt_tokens,
      cached_tokens: res.usage.prompt_tokens_details?.cached_tokens ?? 0,
    };
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
    await lm?.dispose();
    lm = null;
    engine = null;
  },
};

export type BenchWorker = typeof api;
Comlink.expose(api);
