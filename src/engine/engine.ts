import { JevError, toJevError, type ChatCompletion, type ChatCompletionChunk, type ChatRequest, type DecisionResponse, type ExtractionResponse, type ModelList } from '../contract/index.ts';
import { idleStatus, type CallHandle, type DebugAction, type EngineApi, type EngineStatus, type LoadEvent, type LoadOptions, type UnloadReport } from '../protocol/engine-api.ts';
import type { EngineBeat, EngineFault } from '../protocol/supervision.ts';
import { complete } from './chat/chat.ts';
import { GrammarCache } from './grammar/grammar-cache.ts';
import { WorkerGrammarBackend, type GrammarLimits } from './grammar/worker-grammar-backend.ts';
import { warmGrammar } from './chat/request-grammar.ts';
import { decide } from './decision/decide.ts';
import { extract } from './extraction/extract.ts';
import { localScorer } from './decision/local-scorer.ts';
import type { LanguageModel } from './model/language-model.ts';
import { httpSource } from './load/http-source.ts';
import { loadWithPolicy } from './load/load-policy.ts';
import { LoadTimer } from './load/load-timing.ts';
import { DTYPE_FILES, type ModelSource } from './load/load-model.ts';
import { modelVersion } from './model/model-version.ts';
import { PassGate } from './runtime/pass-gate.ts';
import { PriorCache } from './decision/prior-cache.ts';
import { defaultPrefixCacheBytes, PrefixCache } from './model/prefix-cache.ts';
import { isAllocationFailure } from './runtime/allocation-failure.ts';
import { applyRuntimeConfig, askedNodeThreads, configuredOrtBuild, configuredThreads, nodeProvider, type RuntimeConfig } from './load/runtime-env.ts';
import { TaskQueue } from './runtime/task-queue.ts';
import { MODEL_CACHE } from './load/storage/integrity-cache.ts';
import { webgpuDevice, type GpuDeviceLike } from './runtime/webgpu-device.ts';
import { engineMemory, weightFiles } from './memory.ts';
import { RequestFront } from './request-front.ts';

export interface EngineConfig {
  runtime: RuntimeConfig;
  /** How to ask whether a model offers a file; defaults to an HTTP HEAD against the host. */
  source?: (options: LoadOptions) => ModelSource;
  isNode?: boolean;
  /** The worker that hosts the engine, where there is one: it hears faults and runs crash drills. */
  host?: EngineHost;
  /**
   * The prefix cache's byte budget (docs/prefix-cache.md); 0 turns it off. Default: a sixteenth
   * of `navigator.deviceMemory`, within 32–256 MiB.
   */
  prefixCacheBytes?: number;
  /** The bounds of a grammar's compile, in time and memory (grammar/worker-grammar-backend.ts). */
  grammar?: GrammarLimits;
}

/**
 * How long a request that failed on WebGPU waits for the device's `lost` to settle before it is
 * reported as an engine_error (#failure): the loss goes through the GPU process, which a loaded
 * machine may take seconds to answer (500 ms was too short under 200 concurrent requests).
 */
const DEVICE_LOSS_GRACE_MS = 5_000;

/** What a host offers the engine: see protocol/supervision.ts and docs/reliability.md. */
export interface EngineHost {
  /** The engine cannot go on here (its WebGPU device was lost): the supervisor restarts it. */
  fault(fault: EngineFault): void;
  /** Makes the host die as a crash would, or hang in a loop (a drill); returns false where it cannot. */
  crash(mode: 'throw' | 'exit' | 'hang'): boolean;
  /** A sign of life for the watchdog: a forward pass or a load begins or ends. */
  beat?(beat: EngineBeat): void;
}

/**
 * The engine: one loaded model, one queue. Every request body is validated at the boundary, by
 * the request front it shares with the server (request-front.ts); inside, the computation trusts
 * its input. Loads follow the load policy (load/load-policy.ts).
 */
export class Engine implements EngineApi {
  readonly #config: EngineConfig;
  readonly #queue = new TaskQueue();
  /** Validation, the model's name, the model list and cancellation by call id, shared with the server's RemoteEngine. */
  readonly #front = new RequestFront<LanguageModel>({ ownedBy: 'local', serve: (signal, work) => this.#serve(signal, work) });
  readonly #priors = new PriorCache();
  readonly #prefixes: PrefixCache;
  /** Compiled grammars of response formats (grammar/); xgrammar itself loads on the first that needs it. */
  readonly #grammars: GrammarCache;
  readonly #gate = new PassGate();
  /** The signal of the request being served (one at a time): a pass held at the gate ends with it. */
  #serving: AbortSignal | null = null;
  #lm: LanguageModel | null = null;
  #device: GpuDeviceLike | null = null;
  /** The device whose loss #deviceLoss reports, and the one the lose-device drill destroyed. */
  #watched: GpuDeviceLike | null = null;
  #destroyed: GpuDeviceLike | null = null;
  /** Resolves with what happened once the WebGPU device the model runs on is lost. */
  #deviceLoss: Promise<string> | null = null;
  #loading: Promise<LanguageModel> | null = null;
  /** The loaded model's weight files' bytes (EngineStatus.memory.modelBytes). */
  #modelBytes = 0;
  #status: Omit<EngineStatus, 'prefixCache' | 'memory'> = { state: 'idle', model: null, version: null, device: null, dtype: null, contextLength: null, threads: null, adapter: null, int8Projections: null, error: null, counters: { tokensFed: 0, forwardPasses: 0, residentPasses: 0, liveTensors: 0, wasmHeapBytes: null } };

  constructor(config: EngineConfig) {
    this.#config = config;
    const deviceMemory = (globalThis.navigator as { deviceMemory?: number } | undefined)?.deviceMemory;
    this.#prefixes = new PrefixCache(config.prefixCacheBytes ?? defaultPrefixCacheBytes(deviceMemory));
    this.#grammars = new GrammarCache(new WorkerGrammarBackend(config.grammar));
  }

  /** The loaded model, for tests and the benchmark that drive it directly. */
  get languageModel(): LanguageModel | null {
    return this.#lm;
  }

  /** The compiled grammars and their counters (compiles, matchers made and disposed), for tests. */
  get grammars(): GrammarCache {
    return this.#grammars;
  }

  async load(options: LoadOptions, onEvent: (e: LoadEvent) => void = () => {}): Promise<EngineStatus> {
    const previous = this.#loading;
    const before = this.#status;
    this.#status = { ...this.#status, state: 'loading', model: options.model, error: null };
    const loading = (async () => {
      await previous?.catch(() => undefined);
      return this.#queue.run(() => this.#load(options, onEvent));
    })();
    this.#loading = loading;
    try {
      await loading;
      const status = await this.status();
      onEvent({ type: 'ready', status });
      return status;
    } catch (e) {
      const err = toJevError(e);
      if (this.#lm && before.state === 'ready' && this.#lm.id === before.model) {
        // The model that was serving is still loaded: it goes on serving; the failure is reported.
        this.#status = { ...before, error: err.message };
        if (this.#loading === loading) this.#loading = null;
      } else {
        this.#status = { ...this.#status, state: 'failed', error: err.message };
      }
      throw err;
    }
  }

  async #load(options: LoadOptions, onEvent: (e: LoadEvent) => void): Promise<LanguageModel> {
    this.#config.host?.beat?.({ type: 'load-start' });
    try {
      return await this.#loadOn(options, onEvent);
    } finally {
      this.#config.host?.beat?.({ type: 'load-end' });
    }
  }

  /** Loads under the load policy (load/load-policy.ts), then puts the model in place of the one before. */
  async #loadOn(options: LoadOptions, heard: (e: LoadEvent) => void): Promise<LanguageModel> {
    const weights = weightFiles(heard);
    const timer = new LoadTimer();
    applyRuntimeConfig(
      {
        ...this.#config.runtime,
        ...(options.ortBase ? { ortBase: options.ortBase } : {}),
        ...(options.ortBuild ? { ortBuild: options.ortBuild } : {}),
        ...(options.threads ? { threads: options.threads } : {}),
      },
      options.host,
      timer,
    );
    const modelCache = this.#config.runtime.modelCache;
    const source = this.#config.source?.(options) ?? httpSource(options, { cacheName: modelCache ? MODEL_CACHE : null });
    const { lm, adapter, storage } = await loadWithPolicy(options, { source, isNode: this.#config.isNode ?? false, modelCache, onEvent: weights.onEvent, timer });
    const lastLoad = timer.report();
    const old = this.#lm;
    this.#lm = lm;
    this.#modelBytes = weights.bytes();
    lm.passHooks = this.#passHooks();
    this.#priors.clear();
    this.#prefixes.reset();
    this.#grammars.clear();
    await old?.dispose();
    this.#status = {
      state: 'ready',
      model: lm.id,
      version: modelVersion(lm),
      device: lm.device === 'cpu' ? nodeProvider() : lm.device,
      dtype: lm.dtype,
      contextLength: lm.contextLength,
      threads: lm.device === 'cpu' ? askedNodeThreads() : configuredThreads(),
      adapter,
      int8Projections: lm.int8Projections,
      int8Head: lm.int8Head,
      tiedHead: lm.tiedHead,
      ...(lm.device !== 'cpu' && configuredOrtBuild() ? { ortBuild: configuredOrtBuild()! } : {}),
      error: null,
      counters: { tokensFed: 0, forwardPasses: 0, residentPasses: 0, liveTensors: 0, wasmHeapBytes: null },
      ...(storage ? { storage } : {}),
      lastLoad,
    };
    if (lm.device === 'webgpu') await this.#watchDevice();
    return lm;
  }

  async status(): Promise<EngineStatus> {
    const lm = this.#lm;
    const prefixCache = this.#prefixes.counters();
    return {
      ...this.#status,
      counters: { tokensFed: lm?.tokensFed ?? 0, forwardPasses: lm?.forwardCalls ?? 0, residentPasses: lm?.residentPasses ?? 0, liveTensors: lm?.ledger.live ?? 0, wasmHeapBytes: lm?.wasmHeapBytes ?? null },
      prefixCache,
      memory: engineMemory(lm, this.#modelBytes, prefixCache),
    };
  }

  async unload(): Promise<UnloadReport> {
    await this.#loading?.catch(() => undefined);
    // In the queue: the requests before it finish; those after it find no model.
    return this.#queue.run(async () => {
      const freed = (await this.status()).memory;
      const lm = this.#lm;
      this.#lm = null;
      this.#loading = null;
      this.#device = null;
      this.#modelBytes = 0;
      this.#priors.clear();
      this.#prefixes.reset();
      this.#grammars.clear();
      await lm?.dispose();
      const { prefixCache: _cache, memory: _memory, ...idle } = idleStatus();
      this.#status = idle;
      return { freed, status: await this.status() };
    });
  }

  async clearCache(): Promise<void> {
    // In the queue, so that no request is using a cache while it goes.
    await this.#queue.run(async () => this.#prefixes.clear());
  }

  async models(): Promise<ModelList> {
    return this.#front.models(this.#status.model);
  }

  async decide(body: unknown, call: CallHandle): Promise<DecisionResponse> {
    return this.#front.decide(body, call, (lm, request, signal) =>
      this.#underPressure(() => decide(localScorer(lm, decisionsReuse(lm) ? this.#prefixes : null), request, { signal, priors: this.#priors })),
    );
  }

  async extract(body: unknown, call: CallHandle): Promise<ExtractionResponse> {
    return this.#front.extract(body, call, async (lm, request, signal) =>
      (await this.#underPressure(() => extract(lm, request, { signal, prefixes: decisionsReuse(lm) ? this.#prefixes : null }))).response,
    );
  }

  async chat(body: unknown, call: CallHandle, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>): Promise<ChatCompletion> {
    // Only a request with a grammar waits for it outside the queue; any other takes its turn at
    // once, so that requests keep the order they came in (test/reliability/cancellation.test.ts).
    return this.#front.chat(
      body,
      call,
      (lm, request, signal) => {
        // A stream that has begun cannot be told again: it is retried only before its first chunk.
        let begun = false;
        const sent = onChunk && ((chunk: ChatCompletionChunk) => ((begun = true), onChunk(chunk)));
        return this.#underPressure(() => complete(lm, request, { signal, onChunk: sent, prefixes: this.#prefixes, grammars: this.#grammars }), () => !begun);
      },
      (request) => (request.response_format.type !== 'text' || request.tools.length > 0 ? this.#grammarAhead(request) : null),
    );
  }

  /**
   * A chat's grammar, compiled on a grammar worker before the request takes its turn in the
   * queue, so that the requests before it are served meanwhile (chat/request-grammar.ts). A body
   * the front refuses is left to it, as is a request that finds no model.
   */
  async #grammarAhead(request: ChatRequest): Promise<void> {
    const lm = await this.#ready().catch(() => null);
    if (!lm) return;
    await warmGrammar(lm, request, this.#grammars);
  }

  async cancel(callId: string): Promise<void> {
    this.#front.cancel(callId);
  }

  async debug(action: DebugAction): Promise<boolean> {
    switch (action.type) {
      case 'crash':
        return this.#config.host?.crash(action.mode) ?? false;
      case 'lose-device': {
        const device = this.#device;
        if (!device) return false;
        // Known here at once, before the device's `lost` settles: requests failing meanwhile report the loss (#failure).
        this.#destroyed = device;
        device.destroy();
        return true;
      }
      case 'hold':
        this.#gate.hold(action.after);
        return true;
      case 'release':
        this.#gate.release();
        return true;
      default: {
        const never: never = action;
        throw new Error(`unknown debug action ${(never as { type: string }).type}`);
      }
    }
  }

  /** The gate of the hold drill, and the beats that tell the watchdog a pass is under way. */
  #passHooks(): LanguageModel['passHooks'] {
    const host = this.#config.host;
    return {
      before: async (tokens) => {
        if (this.#gate.held && this.#serving) await this.#gate.pass(this.#serving);
        host?.beat?.({ type: 'pass-start', tokens });
      },
      after: (tokens, ms) => host?.beat?.({ type: 'pass-end', tokens, ms }),
    };
  }

  /** Reports the loss of the WebGPU device the model runs on: the host restarts the engine on wasm. */
  async #watchDevice(): Promise<void> {
    const device = await webgpuDevice();
    if (!device || device === this.#device) return;
    this.#device = device;
    this.#watched = device;
    this.#deviceLoss = device.lost.then((info) => {
      const message = `The WebGPU device was lost (${info.reason ?? 'unknown'}${info.message ? `: ${info.message}` : ''}).`;
      if (this.#device !== device) return message;
      this.#device = null;
      this.#status = { ...this.#status, state: 'failed', error: message };
      this.#config.host?.fault({ type: 'device-lost', message });
      return message;
    });
  }

  /**
   * The error a failed request answers with. A fault of the model on WebGPU may be the device
   * going away, whose `lost` promise settles after the failing call (through the GPU process: on
   * a loaded machine, seconds later): it is then that loss (engine_unavailable, the engine
   * restarts on wasm), not an engine_error. A device the engine destroyed itself (the drill) is
   * lost for certain, so its loss is awaited; otherwise it is awaited for DEVICE_LOSS_GRACE_MS.
   */
  async #failure(e: unknown): Promise<JevError> {
    const error = toJevError(e);
    const loss = this.#deviceLoss;
    if (error.code !== 'engine_error' || !loss || this.#lm?.device !== 'webgpu') return error;
    const certain = this.#destroyed !== null && this.#destroyed === this.#watched;
    const lost = certain ? await loss : await Promise.race([loss, new Promise<null>((resolve) => setTimeout(() => resolve(null), DEVICE_LOSS_GRACE_MS))]);
    if (lost === null) return error;
    return new JevError('engine_unavailable', `${lost} The engine restarts on wasm: send the request again.`, { param: null, cause: e });
  }

  /** Runs one request in its turn, once the model is ready; `signal` is its call's (request-front.ts). */
  async #serve<T>(signal: AbortSignal, work: (lm: LanguageModel) => Promise<T>): Promise<T> {
    try {
      const lm = await this.#ready();
      return await this.#queue.run(async () => {
        // Unloaded while this request waited its turn.
        if (this.#lm !== lm) throw new JevError('engine_unavailable', 'The model was unloaded: call load() first.', { param: null });
        this.#serving = signal;
        try {
          return await work(lm);
        } finally {
          this.#serving = null;
          this.#gate.ended(signal);
        }
      }, signal);
    } catch (e) {
      throw await this.#failure(e);
    }
  }

  /**
   * Runs a request; where it fails for want of memory while the prefix cache holds caches, they
   * are dropped and the request runs once more: the cache shrinks before a request fails.
   */
  async #underPressure<T>(work: () => Promise<T>, mayRetry: () => boolean = () => true): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (!isAllocationFailure(e) || !mayRetry() || !this.#prefixes.shrink()) throw e;
      return await work();
    }
  }

  async #ready(): Promise<LanguageModel> {
    if (this.#loading) await this.#loading;
    if (!this.#lm) throw new JevError('engine_unavailable', 'No model is loaded: call load() first.', { param: null });
    return this.#lm;
  }
}

export { DTYPE_FILES };

/**
 * Whether decisions read from and write to the prefix cache. Not on q8: the hub's q8 graphs
 * quantize activations per pass (DynamicQuantizeLinear, one scale over all the tokens a pass
 * feeds), so a state continued from a cache answers differently from the same state fed at once
 * (measured on tiny-random-llama: 0.153 against 0.132), and a decision would depend on what was
 * asked before it. Chat reuses the cache on every format, as a conversation's next turn always has.
 */
export function decisionsReuse(lm: LanguageModel): boolean {
  return lm.dtype !== 'q8';
}

