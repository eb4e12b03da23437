import type { ChatCompletion, ChatCompletionChunk, DecisionResponse, ExtractionResponse, ModelList } from '../contract/index.ts';
import type { ModelStorageStatus } from './storage-status.ts';

export type { ModelStorageStatus };

export type DeviceChoice = 'webgpu' | 'wasm' | 'auto';
/** onnxruntime-web's wasm builds the engine ships (src/engine/runtime/ort-build.ts). */
export type OrtBuildName = 'cpu' | 'jspi' | 'asyncify';

/**
 * `details.reason` of the `engine_unavailable` a load fails with where its worker's onnxruntime
 * build cannot run the device it resolved (the wasm-only build, asked for WebGPU): the supervisor
 * loads it again in a fresh worker (facade/engine-supervisor.ts).
 */
export const RUNTIME_BUILD_REASON = 'runtime_build';
export type DtypeChoice = 'fp32' | 'fp16' | 'q8' | 'q4' | 'q4f16' | 'auto';

/** What to load: a model id under a host laid out like the Hugging Face hub. */
export interface LoadOptions {
  model: string;
  /** Base URL: a file resolves as `{host}/{model}/resolve/main/{file}`. */
  host: string;
  device: DeviceChoice;
  dtype: DtypeChoice;
  /** Where onnxruntime-web's `.mjs`/`.wasm` are served; defaults to the copy shipped beside the engine. */
  ortBase?: string | undefined;
  /**
   * The embedding and lm_head read from one int8 matrix on wasm (src/engine/graph/int8-head.ts).
   * Unset: for every format but fp32 (which stays exact); `true`: for fp32 too; `false`: for none.
   */
  quantizeHead?: boolean | undefined;
  /**
   * onnxruntime-web's wasm build (src/engine/runtime/ort-build.ts): `cpu` (the wasm-only build),
   * `jspi`, `asyncify`, or `auto` (unset) for the device's measured default: `cpu` on wasm, JSPI on
   * WebGPU where the browser has it. The first load of a worker fixes it: onnxruntime cannot switch
   * builds afterwards (a `cpu` engine asked for WebGPU later is replaced by a fresh worker). JSPI
   * where the browser lacks it loads asyncify; `cpu` on WebGPU loads the WebGPU build.
   */
  ortBuild?: OrtBuildName | 'auto' | undefined;
  /**
   * onnxruntime-web's wasm threads (a whole number from 1 to 256). Unset: one per core where the
   * page is cross-origin isolated, else 1 (docs/threads.md). The first load of a worker fixes it:
   * onnxruntime starts its threads once. `status().threads` says what the engine runs with.
   */
  threads?: number | undefined;
}

/** Load progress, a union tagged by `type`. Bytes are per file. */
export type LoadEvent =
  | { type: 'file'; file: string; loaded: number; total: number }
  | { type: 'file-done'; file: string }
  | { type: 'fallback'; from: 'webgpu'; to: 'wasm'; reason: string }
  | { type: 'ready'; status: EngineStatus };

export interface EngineStatus {
  state: 'idle' | 'loading' | 'ready' | 'failed';
  model: string | null;
  /** The `model` field of responses: `local/jev-<model>.<dtype>-<date>`. */
  version: string | null;
  /** Where the model runs: WebGPU or wasm in a browser; in Node (`jev-local serve`), onnxruntime-node's CPU or CUDA provider. */
  device: 'webgpu' | 'wasm' | 'cpu' | 'cuda' | null;
  dtype: string | null;
  contextLength: number | null;
  /** Threads onnxruntime runs with: wasm threads in a browser; in Node, the intra-op threads asked (`--threads`), null for its default (every core). */
  threads: number | null;
  /** The WebGPU adapter's description, where one was found. */
  adapter: string | null;
  /**
   * 4-bit projections the load rewrote into 8-bit integer products: on wasm, whose onnxruntime has
   * no 4-bit kernel (src/engine/graph/int8-projections.ts, docs/threads.md "q4 on wasm"). 0 where none
   * (every other format or device), null before a load.
   */
  int8Projections: number | null;
  /**
   * The token embedding and lm_head read from one int8 matrix with a scale per token, made at load
   * (src/engine/graph/int8-head.ts; docs/models.md "The embedding and lm_head at 8 bits"): on wasm
   * for q8, q4, q4f16 and fp16, for fp32 only with `quantizeHead`. `embedding` / `lmHead`: which
   * readers were rewritten; `floatBytesDropped`: the float matrices' bytes the graph no longer
   * holds; `int8Bytes`: the int8 matrices and scales that replaced them; `engineKernel`: the
   * lm_head (and a tied embedding) computed by the engine's own WebAssembly kernel outside
   * onnxruntime (src/engine/runtime/int8-head-kernel.ts), not by MatMulInteger. Absent before a load.
   */
  int8Head?: { embedding: boolean; lmHead: boolean; engineKernel: boolean; floatBytesDropped: number; int8Bytes: number };
  /**
   * Bytes of the packed lm_head copy onnxruntime did not make because the load held a tied float32
   * embedding and lm_head once, unpacked (src/engine/graph/tied-head.ts; docs/memory.md): on wasm
   * where the head stays float32 (fp32 without `quantizeHead`). 0 where not rewritten; absent before a load.
   */
  tiedHead?: number;
  /** The onnxruntime-web build the engine's worker loaded (LoadOptions.ortBuild); absent before a load and in Node. */
  ortBuild?: OrtBuildName;
  /** Tokens the model has read and forward passes run since it loaded: prefill work made observable. */
  counters: {
    tokensFed: number;
    forwardPasses: number;
    /**
     * Forward passes whose KV cache stayed in wasm memory, not copied out and back in
     * (build/ort-patch.mjs; docs/threads.md). 0 on WebGPU (the cache is on the GPU) and where the
     * page is not cross-origin isolated.
     */
    residentPasses: number;
    /**
     * Tensors the loaded model's owner holds now (made by the engine or returned by the model,
     * not yet disposed; see tensor-ledger.ts). Between requests these are the prefix cache's:
     * one tensor per past key/value input for each of its `prefixCache.entries`.
     */
    liveTensors: number;
    /**
     * Bytes of onnxruntime's wasm memory, read from the outputs of the last forward pass that
     * stayed in it (resident-outputs.ts): a wasm heap only grows, so a figure that keeps rising
     * between requests is a leak in wasm. null before such a pass, on WebGPU, and where the page
     * is not cross-origin isolated (outputs are then copied out).
     */
    wasmHeapBytes: number | null;
  };
  /**
   * The prefix cache: key/value caches of earlier requests' prompts, reused by later requests
   * that begin the same way (docs/prefix-cache.md). Counters since the model loaded.
   */
  prefixCache: PrefixCacheStatus;
  /** What the engine holds in memory now (docs/memory.md, "Memory you can see"); `unload()` frees it. */
  memory: MemoryStatus;
  /**
   * What the last load stored of its model in this browser, and where it could not, why (it then
   * serves from memory): storage-status.ts. Absent where the engine keeps no model cache (Node).
   */
  storage?: ModelStorageStatus;
  /**
   * How long the last load took and where it went (src/engine/load/load-timing.ts; docs/benchmarks.md,
   * "Where a load goes"). Absent before a load.
   */
  lastLoad?: LastLoad;
  error: string | null;
  /**
   * The facade's queue (absent in the engine's own status): requests in flight (served or
   * waiting, streams until they end) and how many may wait (limits.maxQueued).
   */
  queue?: { inFlight: number; maxQueued: number };
  /**
   * The engine shared by the tabs of this origin that use the same model (`share: 'origin'`,
   * docs/sharing.md): which tab hosts it and how many tabs it serves. Absent with `share: 'tab'`.
   */
  sharing?: SharingStatus;
}

/**
 * A phase of a load: `integrity` (hashing files read from, or stored in, the browser's cache),
 * `storageRead` (reading them from it), `download` (from the network), `wasm` (fetching, compiling
 * and instantiating WebAssembly: onnxruntime's module at a worker's first load), `rewrites` (the
 * session rewrites, src/engine/load/session-rewrites.ts), `session` (onnxruntime creating the
 * session; in Node the whole model read), `firstPass` (the probe pass and, on WebGPU, the long-pass
 * check), `tokenizer` (reading the tokenizer), `other` (the rest: the host check, the choice of
 * format, the memory check, transformers.js' own work).
 */
export type LoadPhase = 'integrity' | 'storageRead' | 'download' | 'wasm' | 'rewrites' | 'session' | 'firstPass' | 'tokenizer' | 'other';

/** `EngineStatus.lastLoad`. */
export interface LastLoad {
  /** Milliseconds from the start of the load until the model could answer. */
  totalMs: number;
  /** Milliseconds of each phase; where phases ran at once, an instant counts once, for the more specific (the list's order): they add up to `totalMs`. */
  phases: Record<LoadPhase, number>;
  /**
   * Milliseconds during which each phase ran, whatever ran beside it: where `phases` gives an
   * instant to a more specific phase (onnxruntime's WebAssembly compiled while the model's files
   * download counts as `download` there), this keeps the step's own length. Not a partition: these
   * can add up to more than `totalMs`.
   */
  running: Record<Exclude<LoadPhase, 'other'>, number>;
  /** Bytes of model files received from the network during the load. */
  bytesFetched: number;
  /** Whether every model file the load read came from the browser's cache (none from the network). */
  fromCache: boolean;
  /**
   * Bytes of kept rewrites' parts that the session read from the Origin Private File System as it
   * asked for each weight, never held whole in memory (a return visit in the engine's worker:
   * src/engine/load/storage/part-on-disk.ts); 0 where they were read whole, or none was kept.
   */
  keptReadAsAsked: number;
}

export interface SharingStatus {
  mode: 'origin';
  /** This tab's id (random, for this client's lifetime). */
  tab: string;
  /** The id of the tab whose worker runs the engine (this one's where `hosting`). */
  host: string;
  hosting: boolean;
  /** Tabs the engine serves: the host and every tab waiting to take over from it. */
  tabs: number;
}

/** The status of an engine with no model: nothing loaded, every counter at zero, an empty prefix cache. */
export function idleStatus(): EngineStatus {
  return {
    state: 'idle',
    model: null,
    version: null,
    device: null,
    dtype: null,
    contextLength: null,
    threads: null,
    adapter: null,
    int8Projections: null,
    error: null,
    counters: { tokensFed: 0, forwardPasses: 0, residentPasses: 0, liveTensors: 0, wasmHeapBytes: null },
    prefixCache: { entries: 0, tokens: 0, bytes: 0, maxBytes: 0, hits: 0, misses: 0, cachedTokens: 0, evictions: 0 },
    memory: noMemory(),
  };
}

/**
 * The memory an engine holds, in bytes; null where it cannot be known here. Between requests
 * these are all it holds: a request's own key/value cache lives only while it runs.
 */
export interface MemoryStatus {
  /** The loaded model's weights: the bytes of its graph and external-data files (`onnx/…`). 0 with no model. */
  modelBytes: number;
  /** Key/value caches held between requests: the prefix cache's (`prefixCache.bytes`). */
  kvCacheBytes: number;
  /**
   * onnxruntime's wasm memory, which holds the weights and caches on wasm; null before a pass
   * that stayed in it (see `counters.wasmHeapBytes`), on WebGPU, in Node and without cross-origin isolation.
   */
  wasmHeapBytes: number | null;
  /**
   * WebGPU buffers alive in the engine's thread (onnxruntime's weights, key/value caches and the
   * pool it keeps for reuse), counted as they are made and destroyed; null off WebGPU.
   */
  webgpuBufferBytes: number | null;
}

/** An engine with no model holds nothing. */
export function noMemory(): MemoryStatus {
  return { modelBytes: 0, kvCacheBytes: 0, wasmHeapBytes: null, webgpuBufferBytes: null };
}

/** What `unload()` freed (the memory the engine held just before), and the engine's status after (idle). */
export interface UnloadReport {
  freed: MemoryStatus;
  status: EngineStatus;
}

export interface PrefixCacheStatus {
  /** Caches held, the tokens they cover and their bytes; the byte budget. */
  entries: number;
  tokens: number;
  bytes: number;
  maxBytes: number;
  /** Requests that reused a held prefix, and those that found none. */
  hits: number;
  misses: number;
  /** Prompt tokens reused instead of fed. */
  cachedTokens: number;
  /** Caches dropped to stay within the budget or to free memory under pressure (not by a clear). */
  evictions: number;
}

/**
 * Fault drills, safe in production: each one exercises a recovery path (docs/reliability.md).
 * `crash`: the worker dies (`throw`: an uncaught error; `exit`: it closes itself) or hangs
 * (`hang`: alive, but stuck in a loop: the watchdog ends it).
 * `lose-device`: the WebGPU device is destroyed, as when the GPU resets.
 * `hold`: `after` more forward passes run, then the next waits until `release` (a request is
 * held open by construction, for drills and tests that act while it runs).
 */
export type DebugAction =
  | { type: 'crash'; mode: 'throw' | 'exit' | 'hang' }
  | { type: 'lose-device' }
  | { type: 'hold'; after: number }
  | { type: 'release' };

/** A call in flight, named so that it can be cancelled from the other side of a worker boundary. */
export interface CallHandle {
  id: string;
}

/**
 * The engine's interface: implemented by the engine itself (in a worker, or in-process in tests)
 * and reached through Comlink by the facade. Request bodies cross as plain data and are validated
 * by the engine, at the boundary.
 */
export interface EngineApi {
  load(options: LoadOptions, onEvent?: (event: LoadEvent) => void): Promise<EngineStatus>;
  status(): Promise<EngineStatus>;
  decide(body: unknown, call: CallHandle): Promise<DecisionResponse>;
  /** An extraction (`POST /v1/extractions`): typed fields read from one state (docs/extraction.md). */
  extract(body: unknown, call: CallHandle): Promise<ExtractionResponse>;
  chat(body: unknown, call: CallHandle, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>): Promise<ChatCompletion>;
  cancel(callId: string): Promise<void>;
  models(): Promise<ModelList>;
  /** Runs a fault drill; resolves whether it applied (no WebGPU device to lose, no worker to crash: false). */
  debug(action: DebugAction): Promise<boolean>;
  /** Drops every cached prefix (the next requests start cold); resolves once they are freed. */
  clearCache(): Promise<void>;
  /**
   * Frees the model and its caches once the requests before it are done; requests after it are
   * refused with `engine_unavailable` until the next `load`. Resolves with what it freed.
   */
  unload(): Promise<UnloadReport>;
}
