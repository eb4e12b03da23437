import { Tensor, type PreTrainedModel, type PreTrainedTokenizer } from '@huggingface/transformers';
import { emptyLike, floatsOf, type ElementArray } from '../runtime/float16.ts';
import { emptyCache, KvCache, type KvInput } from './kv-cache.ts';
import { stackRows, writeStep, type CacheRows } from './kv-rows.ts';
import { stepOutputName } from '../runtime/step-output-names.ts';
import { LogProbRow, logSoftmax } from './log-softmax.ts';
import { TensorLedger } from '../runtime/tensor-ledger.ts';
import { contextLengthOf, encodeText, positiveInt, type TokenizerModel } from './tokenizer-model.ts';
import { residesInWasm, wasmHeapBytes, withResidentOutputs } from '../runtime/resident-outputs.ts';
import type { KernelHead } from '../runtime/int8-head-kernel.ts';
import type { EngineStatus } from '../../protocol/engine-api.ts';

export type Device = 'webgpu' | 'wasm' | 'cpu';

/** The default bound on the logits one pass returns (LanguageModel.logitsBudgetBytes). */
export const LOGITS_BUDGET_BYTES = 128 * 1024 * 1024;
export type Dtype = 'fp32' | 'fp16' | 'q8' | 'q4' | 'q4f16';

/** What runs around every forward pass: the engine's pass gate and its beats to the watchdog. */
export interface PassHooks {
  /** Before a pass of `tokens` tokens; the pass waits for it (the gate of a drill). */
  before(tokens: number): Promise<void> | void;
  /** After the pass, whether it succeeded or not. */
  after(tokens: number, ms: number): void;
}

/** Minimal view of an onnxruntime session, as transformers.js keeps it on the model. */
interface SessionLike {
  inputNames: readonly string[];
  outputNames?: readonly string[];
  inputMetadata?: readonly { name: string; type?: string; shape?: readonly (number | string)[] }[];
  /** onnxruntime's run, fetching only the outputs named (LanguageModel's rows written in place). */
  run?(feeds: Record<string, unknown>, fetches: readonly string[]): Promise<Record<string, unknown>>;
}

/**
 * A loaded causal language model: the tokenizer, the ONNX model, and what the engine needs to
 * drive forward passes by hand (the names and shapes of the cache inputs, the context length).
 */
export class LanguageModel implements TokenizerModel {
  readonly kvInputs: readonly KvInput[];
  readonly contextLength: number;
  readonly vocabSize: number;
  readonly #hasPositionIds: boolean;
  readonly #hasLogitsToKeep: boolean;
  readonly #session: SessionLike;
  /** Whether the graph returns what each pass adds to the cache (graph/step-outputs.ts), and its attention has no sliding window. */
  readonly #stepOutputs: boolean;
  #rowsExact: Promise<boolean> | undefined;
  /** Counts every token the model has been fed since load: tests observe prefill sizes here. */
  tokensFed = 0;
  forwardCalls = 0;
  /** Batched passes whose new keys and values were written into the rows' room in place (`forwardRows`). */
  inPlacePasses = 0;
  /** Passes whose KV cache stayed in wasm memory (resident-outputs.ts); 0 where outputs are copied. */
  residentPasses = 0;
  /** onnxruntime's wasm memory in bytes, as the last resident pass's outputs show it (EngineStatus.counters.wasmHeapBytes). */
  wasmHeapBytes: number | null = null;
  /** 4-bit projections its load rewrote into 8-bit integer products (session-rewrites.ts; EngineStatus.int8Projections). */
  int8Projections = 0;
  /** The embedding and lm_head its load rewrote to read one int8 matrix (session-rewrites.ts; EngineStatus.int8Head). */
  int8Head: NonNullable<EngineStatus['int8Head']> = { embedding: false, lmHead: false, engineKernel: false, floatBytesDropped: 0, int8Bytes: 0 };
  /**
   * Where its load took the lm_head (and a tied embedding) out of the graph (kernel-head.ts): each
   * pass feeds the embedding rows and computes the logits with this kernel (int8-head-kernel.ts).
   */
  kernelHead: KernelHead | null = null;
  /** Bytes of the packed lm_head copy its load avoided by holding a tied float32 matrix once (session-rewrites.ts; EngineStatus.tiedHead). */
  tiedHead = 0;
  /** Every tensor made here or returned by the model, counted until disposed (EngineStatus.counters.liveTensors). */
  readonly ledger = new TensorLedger();
  /** Set by the engine that serves this model. */
  passHooks: PassHooks | null = null;
  /**
   * The most tokens one pass may feed; longer inputs are fed in passes of at most this many
   * (exactly the same result: each pass continues the cache of the one before). Null: no limit.
   * Set at load where the backend computes a long pass wrongly (see `passLimitCheck` in load-model.ts).
   */
  maxPassTokens: number | null = null;
  /**
   * The most bytes of logits one pass may return. A hub export returns logits for every position
   * it is fed, and only the last is read: with Qwen's 151,936-token vocabulary a 512-token state
   * would make 311 MB of float32 logits in one pass (Gemma's 262,144 tokens: 537 MB). Longer
   * inputs are fed in passes whose logits fit (exact, as `maxPassTokens`). 128 MiB lets a
   * 49,152-token vocabulary (SmolLM2) take 682 tokens a pass; Qwen 220, Gemma 128. Infinity: no
   * bound. Graphs with a `num_logits_to_keep` input return only the rows asked for and need none.
   */
  logitsBudgetBytes = LOGITS_BUDGET_BYTES;

  constructor(
    readonly id: string,
    readonly model: PreTrainedModel,
    readonly tokenizer: PreTrainedTokenizer,
    readonly device: Device,
    readonly dtype: Dtype,
  ) {
    const sessions = (model as unknown as { sessions: Record<string, SessionLike> }).sessions;
    const session = sessions['model'] ?? sessions['decoder_model_merged'];
    if (!session) throw new Error(`model ${id} has no decoder session`);
    const meta = session.inputMetadata ?? [];
    const kvFallback = kvCacheType(model.config, dtype);
    this.kvInputs = session.inputNames
      .filter((n) => n.startsWith('past_key_values.'))
      .map((name) => {
        const m = meta.find((x) => x.name === name);
        return {
          name,
          type: m?.type ?? kvFallback,
          dims: (m?.shape ?? [null, null, null, null]).map((d) => (typeof d === 'number' ? d : null)),
        };
      });
    if (this.kvInputs.length === 0) throw new Error(`model ${id} has no past_key_values inputs (a KV-cache export is required)`);
    this.#hasPositionIds = session.inputNames.includes('position_ids');
    this.#hasLogitsToKeep = session.inputNames.includes('num_logits_to_keep');
    this.#session = session;
    const config = model.config as unknown as Record<string, unknown>;
    this.contextLength = contextLengthOf(config);
    this.#stepOutputs =
      typeof session.run === 'function' &&
      this.kvInputs.every((k) => session.outputNames?.includes(stepOutputName(k.name.replace('past_key_values', 'present')))) &&
      !slidingWindow(config, this.contextLength);
    this.vocabSize = positiveInt(config['vocab_size']) ?? 0;
  }

  emptyCache(): KvCache {
    return emptyCache(this.kvInputs, this.ledger);
  }

  /**
   * One forward pass over `ids`, continuing `past` (which is left intact). Returns the logits of
   * the last `keep` positions (all of them when `keep` is 0) and the extended cache.
   * The caller owns and disposes both.
   */
  async forward(ids: readonly number[], past: KvCache, keep = 0): Promise<{ logits: Tensor; cache: KvCache }> {
    if (ids.length === 0) throw new Error('forward: no tokens');
    if (past.disposed) throw new Error('forward: cache already disposed');
    const max = this.passTokens();
    if (max === null || ids.length <= max) return this.#pass(ids, past, keep);
    // In passes of at most `max` tokens. The rows asked for may span passes: then every pass
    // keeps all its rows and they are joined; else only the last pass's rows are kept.
    const lastLength = ids.length - max * Math.floor((ids.length - 1) / max);
    const spanning = keep === 0 || keep > lastLength;
    const pieces: Tensor[] = [];
    let cache = past;
    let failed = false;
    try {
      for (let start = 0; start < ids.length; start += max) {
        const end = Math.min(ids.length, start + max);
        const last = end === ids.length;
        const pass = await this.#pass(ids.slice(start, end), cache, spanning ? 0 : last ? keep : 1);
        if (cache !== past) cache.dispose();
        cache = pass.cache;
        if (spanning || last) pieces.push(pass.logits);
        else pass.logits.dispose();
      }
      const logits = pieces.length === 1 ? pieces[0]! : this.#joinRows(pieces, keep);
      return { logits, cache };
    } catch (e) {
      failed = true;
      if (cache !== past) cache.dispose();
      throw e;
    } finally {
      if (failed || pieces.length > 1) for (const t of pieces) t.dispose();
    }
  }

  /** The most tokens one pass feeds: the backend's limit and the logits budget, whichever is lower; null: no limit. */
  passTokens(): number | null {
    const rowBytes = this.vocabSize * (this.dtype === 'fp16' || this.dtype === 'q4f16' ? 2 : 4);
    const byLogits = this.#hasLogitsToKeep || rowBytes === 0 || !Number.isFinite(this.logitsBudgetBytes) ? null : Math.max(16, Math.floor(this.logitsBudgetBytes / rowBytes));
    if (this.maxPassTokens === null) return byLogits;
    return byLogits === null ? this.maxPassTokens : Math.min(this.maxPassTokens, byLogits);
  }

  /** The rows of several [1, n_i, vocab] logits tensors as one [1, rows, vocab] tensor (the last `keep` rows, or all when 0). */
  #joinRows(pieces: readonly Tensor[], keep: number): Tensor {
    const vocab = pieces[0]!.dims.at(-1)!;
    const total = pieces.reduce((n, t) => n + t.dims.at(-2)!, 0);
    const rows = keep === 0 ? total : Math.min(keep, total);
    const skip = total - rows;
    // The same array type as the pieces (Float32Array, Float16Array or Uint16Array bits): copied, never converted.
    const data = emptyLike(pieces[0]!.data, rows * vocab);
    let row = 0;
    for (const t of pieces) {
      const n = t.dims.at(-2)!;
      const src = t.data as ElementArray;
      for (let r = 0; r < n; r++, row++) if (row >= skip) data.set(src.subarray(r * vocab, (r + 1) * vocab) as never, (row - skip) * vocab);
    }
    return this.ledger.track(new Tensor(pieces[0]!.type as 'float32', data as never, [1, rows, vocab]));
  }

  /**
   * One pass over the rows of a batched cache (kv-rows.ts): `ids[r]` is row r's next token. Returns
   * the logits [rows, 1, vocab] (read with `rowLogProbs`) and the batched cache one position
   * longer, every row's mask and position advanced. The caller owns and disposes both; `rows` is
   * left intact. Only where `rowsExact()` said yes.
   */
  async forwardRows(ids: readonly number[], rows: CacheRows): Promise<{ logits: Tensor; rows: CacheRows }> {
    if (ids.length !== rows.mask.length || ids.length === 0) throw new Error(`forwardRows: ${ids.length} tokens for ${rows.mask.length} rows`);
    if (rows.cache.disposed) throw new Error('forwardRows: cache already disposed');
    if (rows.used < rows.cache.length && this.inPlaceRows) return this.#passInPlace(ids, rows);
    const { logits, cache } = await this.#pass(ids, rows.cache, 1, rows);
    const length = cache.length;
    const mask = rows.mask.map((m) => {
      const next = new Uint8Array(length);
      next.set(m);
      next[length - 1] = 1;
      return next;
    });
    return { logits, rows: { cache, mask, positions: rows.positions.map((p) => p + 1), used: length } };
  }

  /**
   * Whether `forwardRows` writes a pass's new keys and values into the rows' room in place (rows
   * stacked with room: kv-rows.ts `stackRows`), fetching only the logits and what the pass adds
   * (graph/step-outputs.ts) instead of the whole cache as a new copy. Only on onnxruntime-node's
   * CPU sessions given step outputs (server/node-session-rewrites.ts), where every output is copied
   * out, and only where attention has no sliding window: the room lies between a row's tokens and
   * the token read, which a window would measure.
   */
  get inPlaceRows(): boolean {
    return this.#stepOutputs && this.device === 'cpu' && !this.kernelHead;
  }

  /**
   * `forwardRows` over rows with room: the pass reads the whole room masked (each row's tokens, then
   * the room, then its new token at the end), and its new keys and values are written into the
   * first free position of the same tensors. Every row attends to the same tokens as alone, at the
   * same RoPE positions; only masked positions are added. Returns the same cache, one position
   * fuller.
   */
  async #passInPlace(ids: readonly number[], rows: CacheRows): Promise<{ logits: Tensor; rows: CacheRows }> {
    const n = ids.length;
    const capacity = rows.cache.length;
    const total = capacity + 1;
    const mask = new BigInt64Array(n * total);
    for (const [r, m] of rows.mask.entries()) {
      for (let j = 0; j < capacity; j++) if (m[j]) mask[r * total + j] = 1n;
      mask[r * total + capacity] = 1n;
    }
    const inputs: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, (i) => BigInt(i)), [n, 1]),
      attention_mask: new Tensor('int64', mask, [n, total]),
    };
    if (this.#hasPositionIds) inputs['position_ids'] = new Tensor('int64', BigInt64Array.from(rows.positions, (p) => BigInt(p)), [n, 1]);
    if (this.#hasLogitsToKeep) inputs['num_logits_to_keep'] = new Tensor('int64', [1n], []);
    const feeds: Record<string, unknown> = {};
    for (const [name, t] of [...Object.entries(inputs), ...Object.entries(rows.cache.tensors)]) feeds[name] = t.ort_tensor;
    const steps = this.kvInputs.map((k) => stepOutputName(k.name.replace('past_key_values', 'present')));
    const outputs = await this.#run(n, inputs, async () => {
      const raw = await this.#session.run!(feeds, ['logits', ...steps]);
      return Object.fromEntries(Object.entries(raw).map(([name, t]) => [name, new Tensor(t as never)]));
    });
    this.inPlacePasses += 1;
    try {
      for (const k of this.kvInputs) writeStep(rows, k.name, outputs[stepOutputName(k.name.replace('past_key_values', 'present'))]!);
    } catch (e) {
      for (const t of Object.values(outputs)) t.dispose();
      throw e;
    }
    for (const [name, t] of Object.entries(outputs)) if (name !== 'logits') t.dispose();
    for (const m of rows.mask) m[rows.used] = 1;
    return { logits: outputs['logits']!, rows: { cache: rows.cache, mask: rows.mask, positions: rows.positions.map((p) => p + 1), used: rows.used + 1 } };
  }

  /** Row `row`'s log-probabilities in a [rows, 1, vocab] logits tensor (`forwardRows`). */
  static rowLogProbs(logits: Tensor, row: number): Float64Array {
    return logSoftmax(LanguageModel.#rowLogits(logits, row));
  }

  /** Row `row`'s log-probabilities, read token by token (log-softmax.ts, `LogProbRow`): the values `rowLogProbs` gives, read before `logits` is disposed. */
  static rowLogProbRow(logits: Tensor, row: number): LogProbRow {
    return new LogProbRow(LanguageModel.#rowLogits(logits, row));
  }

  static #rowLogits(logits: Tensor, row: number): ArrayLike<number> {
    const vocab = logits.dims.at(-1)!;
    const count = logits.dims[0]!;
    if (row < 0 || row >= count || logits.dims.at(-2) !== 1) throw new Error(`logits row ${row} out of range (${logits.dims.join('×')})`);
    return floatsOf(logits, row * vocab, vocab);
  }

  /**
   * Whether this model's graph computes the rows of a batched cache with gaps as it computes each
   * alone: true where attention reads the mask position by position (standard operators), false
   * where it reads only a count of valid positions (GroupQueryAttention's seqlens_k), where there
   * is no position_ids input, or where the cache is not in CPU memory. Decided once per model by
   * two small continuations computed both ways (within 1e-3 in every logit); its passes are not
   * counted in `tokensFed`.
   */
  rowsExact(): Promise<boolean> {
    return (this.#rowsExact ??= this.#probeRows());
  }

  async #probeRows(): Promise<boolean> {
    if (!this.#hasPositionIds) return false;
    const counted = [this.tokensFed, this.forwardCalls];
    const made: { dispose(): void }[] = [];
    try {
      const empty = this.emptyCache();
      made.push(empty);
      const long = await this.forward([1, 2, 3], empty, 1);
      const short = await this.forward([4], empty, 1);
      made.push(long.cache, long.logits, short.cache, short.logits);
      const stacked = stackRows([long.cache, short.cache]);
      if (!stacked) return false;
      made.push(stacked.cache);
      const both = await this.forwardRows([5, 6], stacked);
      made.push(both.logits, both.rows.cache);
      for (const [row, cache, id] of [[0, long.cache, 5], [1, short.cache, 6]] as const) {
        const alone = await this.forward([id], cache, 1);
        made.push(alone.logits, alone.cache);
        const a = LanguageModel.logitsAt(alone.logits, -1);
        const vocab = both.logits.dims.at(-1)!;
        const b = floatsOf(both.logits, row * vocab, vocab);
        for (let i = 0; i < vocab; i++) if (!(Math.abs(a[i]! - b[i]!) <= 1e-3 * Math.max(1, Math.abs(a[i]!)))) return false;
      }
      return true;
    } catch {
      return false;
    } finally {
      for (const t of made) t.dispose();
      [this.tokensFed, this.forwardCalls] = counted as [number, number];
    }
  }

  /**
   * One pass of `n` tokens: `call` between the pass gate and the watchdog's beats (`passHooks`),
   * its inputs counted in the ledger and disposed after it, its outputs counted; the pass counted
   * in `tokensFed` and `forwardCalls`. The caller owns the outputs.
   */
  async #run(n: number, inputs: Record<string, Tensor>, call: () => Promise<Record<string, Tensor>>): Promise<Record<string, Tensor>> {
    this.ledger.trackAll(inputs);
    let outputs: Record<string, Tensor>;
    const hooks = this.passHooks;
    try {
      await hooks?.before(n);
      const started = performance.now();
      try {
        outputs = this.ledger.trackAll(await call());
      } finally {
        hooks?.after(n, performance.now() - started);
      }
    } finally {
      for (const t of Object.values(inputs)) t.dispose();
    }
    this.tokensFed += n;
    this.forwardCalls += 1;
    return outputs;
  }

  async #pass(ids: readonly number[], past: KvCache, keep: number, rows?: CacheRows): Promise<{ logits: Tensor; cache: KvCache }> {
    const n = ids.length;
    const total = past.length + (rows ? 1 : n);
    // Batch 1 over n tokens, or (rows) one token in each of n rows.
    const [batch, width] = rows ? [n, 1] : [1, n];
    const mask = new BigInt64Array(batch * total).fill(1n);
    if (rows) for (const [r, m] of rows.mask.entries()) for (let j = 0; j < m.length; j++) if (!m[j]) mask[r * total + j] = 0n;
    const inputs: Record<string, Tensor> = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, (i) => BigInt(i)), [batch, width]),
      attention_mask: new Tensor('int64', mask, [batch, total]),
    };
    if (this.#hasPositionIds) {
      inputs['position_ids'] = new Tensor(
        'int64',
        rows ? BigInt64Array.from(rows.positions, (p) => BigInt(p)) : BigInt64Array.from({ length: n }, (_, i) => BigInt(past.length + i)),
        [batch, width],
      );
    }
    if (this.#hasLogitsToKeep) inputs['num_logits_to_keep'] = new Tensor('int64', [BigInt(keep)], []);
    const head = this.kernelHead;
    if (head?.embeds) inputs[head.embeds] = new Tensor('float32', head.kernel.embed(ids), [batch, width, head.kernel.h]);
    const run = () => this.model.forward({ ...inputs, past_key_values: past.tensors });
    const outputs = await this.#run(n, inputs, async () => (await (this.device === 'wasm' ? withResidentOutputs(run) : run())) as Record<string, Tensor>);
    const present: Record<string, Tensor> = Object.create(null);
    let logits: Tensor | undefined;
    let hidden: Tensor | undefined;
    for (const [name, t] of Object.entries(outputs)) {
      if (name === 'logits') logits = t;
      else if (head && name === head.hidden) hidden = t;
      else if (name.startsWith('present')) present[name.replace('present', 'past_key_values')] = t;
      else t.dispose();
    }
    try {
      if (hidden) {
        // The lm_head in the engine's kernel: the last `keep` rows of the hidden state (all for 0) → [1, rows, V] logits.
        const { kernel } = head!;
        const data = hidden.data as Float32Array;
        const all = data.length / kernel.h;
        const kept = rows ? all : keep > 0 ? Math.min(keep, all) : all;
        this.wasmHeapBytes = wasmHeapBytes(data) ?? this.wasmHeapBytes;
        const dims = rows ? [batch, 1, kernel.v] : [1, kept, kernel.v];
        logits = this.ledger.track(new Tensor('float32', kernel.logits(data.subarray((all - kept) * kernel.h), kept), dims));
      }
    } finally {
      hidden?.dispose();
    }
    if (!logits) {
      for (const t of Object.values(present)) t.dispose();
      throw new Error('forward: the model returned no logits');
    }
    if (Object.values(present).some((t) => t.location === 'cpu' && residesInWasm(t.data))) this.residentPasses += 1;
    if (!hidden) this.wasmHeapBytes = wasmHeapBytes(logits.data) ?? this.wasmHeapBytes;
    return { logits, cache: new KvCache(present, total, this.ledger) };
  }

  /** The logits at row `position` of a [1, n, vocab] logits tensor, as numbers (float32, or float16 of either array type). */
  static logitsAt(logits: Tensor, position: number): ArrayLike<number> {
    const dims = logits.dims;
    const vocab = dims[dims.length - 1]!;
    const rows = dims[dims.length - 2]!;
    const pos = position < 0 ? rows + position : position;
    if (pos < 0 || pos >= rows) throw new Error(`logits row ${position} out of range (${rows})`);
    return floatsOf(logits, pos * vocab, vocab);
  }

  /** Reads the log-probabilities at row `position` of a [1, n, vocab] logits tensor. */
  static logProbsAt(logits: Tensor, position: number): Float64Array {
    return logSoftmax(LanguageModel.logitsAt(logits, position));
  }

  /** The log-probabilities at row `position`, read token by token (`LogProbRow`): the values `logProbsAt` gives, read before `logits` is disposed. */
  static logProbRowAt(logits: Tensor, position: number): LogProbRow {
    return new LogProbRow(LanguageModel.logitsAt(logits, position));
  }

  /** The index of the largest logit at row `position` (the first one on ties, as `argmax` of the log-probabilities). */
  static argmaxAt(logits: Tensor, position: number): number {
    const row = LanguageModel.logitsAt(logits, position);
    let best = 0;
    let max = row[0]!;
    for (let i = 1; i < row.length; i++) {
      const v = row[i]!;
      if (v > max) {
        max = v;
        best = i;
      }
    }
    return best;
  }

  encode(text: string, addSpecialTokens: boolean): number[] {
    return encodeText(this.tokenizer, text, addSpecialTokens);
  }

  async dispose(): Promise<void> {
    await this.model.dispose();
  }
}

/**
 * Whether the config gives attention a sliding window shorter than the context (Gemma 2 and 3's
 * local layers, Mistral's and Phi-3's windows): then where a row's room lies changes what a
 * window reads, and `forwardRows` does not write in place.
 */
function slidingWindow(config: Record<string, unknown>, contextLength: number): boolean {
  const layers = config['layer_types'];
  if (Array.isArray(layers) && layers.some((t) => typeof t === 'string' && t.includes('sliding'))) return true;
  const window = config['sliding_window'];
  return typeof window === 'number' && config['use_sliding_window'] !== false && window < contextLength;
}

/**
 * The KV cache's element type where the session does not declare its inputs' types: the
 * config's `transformers.js_config.kv_cache_dtype[dtype]` (hub exports set it for fp16 and
 * q4f16), else float16 for the float16 formats and float32 for the others.
 */
export function kvCacheType(config: unknown, dtype: Dtype): 'float32' | 'float16' {
  const block = (config as Record<string, unknown> | null)?.['transformers.js_config'] as Record<string, unknown> | undefined;
  const declared = block?.['kv_cache_dtype'];
  const named = typeof declared === 'string' ? declared : (declared as Record<string, unknown> | undefined)?.[dtype];
  if (named === 'float16' || named === 'float32') return named;
  return dtype === 'fp16' || dtype === 'q4f16' ? 'float16' : 'float32';
}
