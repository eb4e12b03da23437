import { AutoModelForCausalLM, AutoTokenizer, env, type ProgressInfo } from '@huggingface/transformers';
import { byteLevelAscii } from '../model/byte-level-ascii.ts';
import { JevError } from '../../contract/index.ts';
import type { DtypeChoice, DeviceChoice, LoadEvent } from '../../protocol/engine-api.ts';
import { DEVICE_CANNOT_RUN, deviceClass, DTYPE_PREFERENCE, dtypePreference } from './dtype-preference.ts';
import { LanguageModel, type Device, type Dtype } from '../model/language-model.ts';
import { classifyLoadError } from './load-failure.ts';
import { ModelHandoff } from './model-handoff.ts';
import { attachRewrites, rewritesOn, withSessionRewrites } from './session-rewrites.ts';
import { timingWasm, type LoadTimer } from './load-timing.ts';
import { RewrittenGraphs } from './rewritten-graphs.ts';
import { warmUpRuntime, type WarmUpFactory } from './runtime-warm-up.ts';
import { nodeProvider, nodeSessionOptions } from './runtime-env.ts';

/** The ONNX file each dtype reads, in the layout of the hub's transformers.js exports. */
export const DTYPE_FILES: Record<Dtype, string> = {
  fp32: 'model.onnx',
  fp16: 'model_fp16.onnx',
  q8: 'model_quantized.onnx',
  q4: 'model_q4.onnx',
  q4f16: 'model_q4f16.onnx',
};

export { dtypePreference };

export interface ModelSource {
  /** Whether the model offers `onnx/<file>`. */
  has(file: string): Promise<boolean>;
}

/** The formats the model offers (its `onnx/` files), in the order of `DTYPE_FILES`. */
export async function offeredDtypes(source: ModelSource): Promise<Dtype[]> {
  const dtypes = Object.keys(DTYPE_FILES) as Dtype[];
  const present = await Promise.all(dtypes.map((d) => source.has(DTYPE_FILES[d]).catch(() => false)));
  return dtypes.filter((_, i) => present[i]);
}

/**
 * The formats among `offered` that `auto` may choose on this device, best first (the device's
 * row of DTYPE_PREFERENCE, less what it cannot run and what the model does not offer). Also what
 * a refusal suggests instead: its first element, when there is one.
 */
export function workingDtypes(device: Device, shaderF16: boolean, offered: readonly Dtype[], exclude: readonly Dtype[] = []): Dtype[] {
  const cls = deviceClass(device, shaderF16);
  return dtypePreference(device, shaderF16).filter((d) => offered.includes(d) && !exclude.includes(d) && !DEVICE_CANNOT_RUN[cls][d]);
}

/** The model's own recommended dtype, `transformers.js_config.dtype` in its config.json, if it names one we read. */
export function exporterDtype(config: unknown): Dtype | null {
  const block = (config as Record<string, unknown> | null)?.['transformers.js_config'] as Record<string, unknown> | undefined;
  let dtype = block?.['dtype'];
  // It may map session names to dtypes: the decoder is `model` (or `decoder_model_merged`).
  if (dtype && typeof dtype === 'object') dtype = (dtype as Record<string, unknown>)['model'] ?? (dtype as Record<string, unknown>)['decoder_model_merged'];
  return typeof dtype === 'string' && dtype in DTYPE_FILES ? (dtype as Dtype) : null;
}

/**
 * The format to load. A named one is checked against what the device can run (a refusal names
 * the reason and a format that would work); `auto` takes the first tier of the device's
 * preference that the model offers, and within a tier of formats measured alike, the model's
 * own recommendation (`recommended`, from `exporterDtype`) or else the table's order.
 */
export async function chooseDtype(
  requested: DtypeChoice,
  device: Device,
  shaderF16: boolean,
  source: ModelSource,
  recommended: Dtype | null = null,
): Promise<Dtype> {
  const cls = deviceClass(device, shaderF16);
  if (requested !== 'auto') {
    const reason = DEVICE_CANNOT_RUN[cls][requested];
    if (reason) throw unrunnable(requested, device, reason, workingDtypes(device, shaderF16, await offeredDtypes(source))[0] ?? null);
    return requested;
  }
  for (const tier of DTYPE_PREFERENCE[cls]) {
    const offered: Dtype[] = [];
    for (const dtype of tier) if (!DEVICE_CANNOT_RUN[cls][dtype] && (await source.has(DTYPE_FILES[dtype]))) offered.push(dtype);
    if (offered.length > 0) return recommended && offered.includes(recommended) ? recommended : offered[0]!;
  }
  throw new JevError('model_load_failed', 'The model offers none of the ONNX files this engine reads (onnx/model*.onnx).', { param: 'model' });
}

/** The refusal of a format the device cannot run, naming why and what would work. */
export function unrunnable(
  dtype: Dtype,
  device: Device,
  reason: string,
  instead: Dtype | null,
  extra: { operator?: string; cause?: unknown } = {},
): JevError {
  const use = instead ? `use dtype ${instead} instead` : 'the model offers no other format that runs here';
  return new JevError('model_load_failed', `The ${dtype} format cannot run on ${device}: ${reason}; ${use}.`, {
    param: 'dtype',
    details: { reason: 'unsupported_format', dtype, device, instead, why: reason, ...(extra.operator ? { operator: extra.operator } : {}) },
    ...(extra.cause === undefined ? {} : { cause: extra.cause }),
  });
}

/** The same refusal (an `unrunnable` error), now naming `instead` as the format to use. */
export function withInstead(refusal: JevError, instead: Dtype | null): JevError {
  const d = refusal.details ?? {};
  if (d['reason'] !== 'unsupported_format' || typeof d['why'] !== 'string') return refusal;
  const operator = typeof d['operator'] === 'string' ? d['operator'] : undefined;
  return unrunnable(d['dtype'] as Dtype, d['device'] as Device, d['why'], instead, { ...(operator ? { operator } : {}), cause: refusal.cause });
}

/**
 * The operator a backend lacks, from the error onnxruntime raises when it cannot create a
 * session ("Could not find an implementation for Foo(1) node with name 'bar'"), or null when
 * the error is something else.
 */
export function missingOperator(error: unknown): { operator: string; node: string | null } | null {
  const message = String((error as Error)?.message ?? error);
  const m = /Could not find an implementation for ([A-Za-z0-9_.]+)(?:\((\d+)\))?(?: node with name '([^']*)')?/.exec(message);
  if (m) return { operator: m[2] ? `${m[1]}(${m[2]})` : m[1]!, node: m[3] ?? null };
  // An operator the runtime does not know at all (a newer contrib op, a custom domain).
  const r = /No Op registered for ([A-Za-z0-9_.]+) with domain_version of (\d+)/.exec(message);
  if (r) return { operator: `${r[1]}(${r[2]})`, node: /In Node, \("([^"]*)"/.exec(message)?.[1] || null };
  const n = /(?:kernel|operator|op) (?:type )?'?([A-Za-z0-9_.]+)'? (?:is )?not (?:implemented|supported)/i.exec(message);
  if (n) return { operator: n[1]!, node: null };
  return null;
}

export interface ResolvedDevice {
  device: Device;
  shaderF16: boolean;
  adapter: string | null;
}

/** `auto` is WebGPU when an adapter exists, else wasm; in Node it is onnxruntime-node's CPU. */
export async function resolveDevice(requested: DeviceChoice, isNode: boolean): Promise<ResolvedDevice> {
  if (isNode) return { device: 'cpu', shaderF16: false, adapter: null };
  if (requested === 'wasm') return { device: 'wasm', shaderF16: false, adapter: null };
  const gpu = (globalThis.navigator as Navigator & { gpu?: { requestAdapter(): Promise<unknown> } } | undefined)?.gpu;
  const adapter = gpu ? ((await gpu.requestAdapter().catch(() => null)) as { features: Set<string>; info?: { description?: string; vendor?: string } } | null) : null;
  if (!adapter) {
    if (requested === 'webgpu') throw new JevError('model_load_failed', 'WebGPU was requested but this browser offers no WebGPU adapter.', { param: 'device' });
    return { device: 'wasm', shaderF16: false, adapter: null };
  }
  const description = adapter.info?.description || adapter.info?.vendor || 'WebGPU adapter';
  return { device: 'webgpu', shaderF16: adapter.features.has('shader-f16'), adapter: description };
}

/** What a load knows of the alternatives, so that a refusal can name a format that would work. */
export interface LoadContext {
  shaderF16?: boolean;
  /** The formats the model offers (`offeredDtypes`); without it a refusal names none. */
  offered?: readonly Dtype[];
  /** The embedding and lm_head at 8 bits: unset by format, `true` for fp32 too, `false` for none (LoadOptions.quantizeHead). */
  quantizeHead?: boolean | undefined;
  /** The load's timing (load-timing.ts): its phases are marked where they happen; none, nothing is timed. */
  timer?: LoadTimer | undefined;
}

/**
 * Loads tokenizer and model, reporting bytes per file, then runs one forward pass of one token
 * (the probe) so that a format whose operators or kernels the backend lacks is refused here, at
 * load time, with `model_load_failed` naming the operator and a format that works, rather than
 * failing the first request. The probe is not counted in the model's counters.
 */
export async function loadLanguageModel(
  model: string,
  device: Device,
  dtype: Dtype,
  onEvent: (e: LoadEvent) => void,
  context: LoadContext = {},
): Promise<LanguageModel> {
  const base = modelBase(model);
  // In the browser, the graph and its external data go from the engine's fetch straight to
  // onnxruntime (model-handoff.ts); their download progress comes from that fetch.
  const handoff = device === 'cpu' ? null : new ModelHandoff((url, loaded, total) => onEvent({ type: 'file', file: fileOf(url, base), loaded, total }));
  const progress_callback = (info: ProgressInfo) => {
    if (info.status === 'progress' && !handoff?.handled(`${base}${info.file}`)) onEvent({ type: 'file', file: info.file, loaded: info.loaded, total: info.total });
    else if (info.status === 'done') onEvent({ type: 'file-done', file: info.file });
  };
  let lm: LanguageModel | null = null;
  const timer = context.timer;
  const timed = <T>(phase: Parameters<LoadTimer['time']>[0], work: () => Promise<T>): Promise<T> => (timer ? timer.time(phase, work) : work());
  try {
    const loaded = await timingWasm(timer, async () => {
      const ort = handoff ? (await import('onnxruntime-web/webgpu')).InferenceSession : null;
      // onnxruntime's WebAssembly compiled while the tokenizer and the model's files are read (runtime-warm-up.ts).
      // On wasm only: onnxruntime-web initializes its runtime once per backend name, and a WebGPU
      // session created while the warm-up's `wasm` initialization runs throws ("multiple calls to 'initWasm()'").
      const warming = ort && device === 'wasm' ? warmUpRuntime(ort as unknown as WarmUpFactory) : null;
      // The tokenizer's files are read and parsed while the model's are: a return visit waited for
      // one, then the other (docs/benchmarks.md, "Where a load goes").
      const tokenizing = timed('tokenizer', () => AutoTokenizer.from_pretrained(model, { progress_callback })).then((tokenizer) => {
        byteLevelAscii(tokenizer); // the same ids, tokenized faster (byte-level-ascii.ts)
        return tokenizer;
      });
      // Awaited below; where the model fails first, its error is the load's and this one is dropped.
      tokenizing.catch(() => undefined);
      const session_options = device === 'cpu' ? nodeSessionOptions() : undefined;
      const fromPretrained = () => AutoModelForCausalLM.from_pretrained(model, { device, dtype, progress_callback, ...(session_options ? { session_options } : {}) });
      // In the browser: each weight copied into wasm memory once, logits computed for the rows read
      // only, and on wasm 4-bit projections as 8-bit integer products (session-rewrites.ts).
      // Rewrites kept in the model cache, beside the file (rewritten-graphs.ts): where the fetch checked the file (its SHA-256 is known).
      const rewritten = ort && handoff ? await withSessionRewrites(ort, fromPretrained, handoff, rewritesOn(device, dtype, context.quantizeHead), timer ?? null, new RewrittenGraphs()) : null;
      // In Node the whole read of the model (from disk) counts as the session's creation.
      const pretrained = rewritten ? rewritten.value : await timed('session', fromPretrained);
      let tokenizer: Awaited<typeof tokenizing>;
      try {
        tokenizer = await tokenizing;
      } catch (e) {
        await pretrained.dispose().catch(() => undefined);
        throw e;
      }
      lm = new LanguageModel(model, pretrained, tokenizer, device, dtype);
      await warming;
      return { lm, rewritten };
    });
    lm = loaded.lm;
    const { rewritten } = loaded;
    if (rewritten) attachRewrites(lm, rewritten.report);
    const ready = lm;
    await timed('firstPass', async () => {
      await probe(ready);
      // The long-pass check, where a graph has a fused attention kernel or was not read (fused-attention.ts).
      const fused = rewritten ? rewritten.report.fusedAttention : null;
      if (device === 'webgpu' && (fused === null || fused.length > 0)) ready.maxPassTokens = await passLimit(ready);
    });
    return lm;
  } catch (e) {
    await lm?.dispose().catch(() => undefined);
    if (JevError.is(e)) throw e;
    const missing = missingOperator(e);
    if (missing) {
      const instead = workingDtypes(device, context.shaderF16 ?? false, context.offered ?? [], [dtype])[0] ?? null;
      const where = missing.node ? ` (node ${missing.node})` : '';
      throw unrunnable(dtype, device, `the ${device} backend has no kernel for the operator ${missing.operator}${where}`, instead, { operator: missing.operator, cause: e });
    }
    // The true cause (host unreachable, CORS, a missing file, …): load-failure.ts.
    throw await classifyLoadError(e, { model, base: modelBase(model), dtype, device: device === 'cpu' ? nodeProvider() : device });
  }
}

/** A model file's name in its folder (`onnx/model.onnx`), as transformers.js names it, from its URL. */
function fileOf(url: string, base: string): string {
  const path = url.replace(/[?#].*$/, '');
  return path.startsWith(base) ? path.slice(base.length) : path.slice(path.lastIndexOf('/') + 1);
}

/** The URL (or local folder) transformers.js reads the model's files from. */
function modelBase(model: string): string {
  if (!env.allowRemoteModels) return `${env.localModelPath}${model}/`;
  return `${env.remoteHost}${env.remotePathTemplate.replace('{model}', model).replace('{revision}', 'main')}`;
}

/** One pass over one token from an empty cache; everything it makes is disposed and uncounted. */
async function probe(lm: LanguageModel): Promise<void> {
  const past = lm.emptyCache();
  try {
    const { logits, cache } = await lm.forward([0], past, 1);
    const type = logits.type;
    logits.dispose();
    cache.dispose();
    if (type !== 'float32' && type !== 'float16') throw new Error(`the model's logits are ${type}, not float32 or float16`);
  } finally {
    past.dispose();
    lm.tokensFed = 0;
    lm.forwardCalls = 0;
  }
}

/**
 * The most tokens a pass may feed on this backend, or null for no limit, found by computing the
 * same 32 tokens in one pass, in two passes of 16, and in passes of 31 and 1: all three must
 * agree. onnxruntime-web 1.31-dev's WebGPU GroupQueryAttention (the onnxruntime-genai builder's
 * exports) gets a pass of 32 or more new tokens wrong (max |Δ logit| about 9 on the generated
 * tiny model from the 5th row on), while passes of up to 31 tokens agree with wasm to 2e-5; the
 * engine then feeds long inputs in passes of 31 (exact: each pass continues the one before).
 * Standard-op exports agree and keep single passes: the check runs once per WebGPU load of a graph
 * with a fused attention operator (graph/fused-attention.ts), or one the load did not read; uncounted.
 */
export async function passLimit(lm: LanguageModel): Promise<number | null> {
  const n = 32;
  const span = Math.max(2, lm.vocabSize - 1);
  const ids = Array.from({ length: n }, (_, i) => 1 + ((i * 37) % span));
  const saved = { fed: lm.tokensFed, calls: lm.forwardCalls, limit: lm.maxPassTokens };
  lm.maxPassTokens = null;
  try {
    const whole = await lastLogProbs(lm, [ids]);
    const halves = await lastLogProbs(lm, [ids.slice(0, 16), ids.slice(16)]);
    const bound = passAgreement(lm.dtype);
    if (maxAbsDiff(whole, halves) <= bound) return null;
    const long = await lastLogProbs(lm, [ids.slice(0, 31), ids.slice(31)]);
    return maxAbsDiff(long, halves) <= bound ? 31 : 16;
  } finally {
    lm.tokensFed = saved.fed;
    lm.forwardCalls = saved.calls;
    lm.maxPassTokens = saved.limit;
  }
}

/**
 * Two ways of computing the same log-probabilities agree within this (nats): rounding, not a wrong
 * result. q8 (MatMulInteger after DynamicQuantizeLinear) quantizes each pass's activations with
 * that pass's own scale, so splitting a pass changes its numbers by design (up to 0.4 nats on the
 * generated tiny model, e2e/formats.spec.ts); the GroupQueryAttention fault is an order of
 * magnitude larger, so q8 is held to a wider bound instead of being split for nothing.
 */
export function passAgreement(dtype: Dtype): number {
  return dtype === 'q8' ? 2 : 0.25;
}

/** The log-probabilities after feeding `chunks` in order, one pass each, from an empty cache. */
async function lastLogProbs(lm: LanguageModel, chunks: readonly number[][]): Promise<Float64Array> {
  let cache = lm.emptyCache();
  let out: Float64Array | null = null;
  try {
    for (const chunk of chunks) {
      const pass = await lm.forward(chunk, cache, 1);
      cache.dispose();
      cache = pass.cache;
      out = LanguageModel.logProbsAt(pass.logits, -1);
      pass.logits.dispose();
    }
  } finally {
    cache.dispose();
  }
  return out!;
}

function maxAbsDiff(a: Float64Array, b: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
