import type { ChatCompletionChunk } from '../contract/index.ts';
import { JevError } from '../contract/index.ts';
import { RUNTIME_BUILD_REASON, type CallHandle, type DebugAction, type DeviceChoice, type EngineApi, type EngineStatus, type LoadEvent, type LoadOptions } from '../protocol/engine-api.ts';

/** How an engine instance died. */
export type EngineDeath =
  /** An uncaught error in its worker (the worker may still run, but its state is not trusted). */
  | { type: 'crashed'; message: string }
  /** The worker went away without an error event (it closed itself, or was killed). */
  | { type: 'exited'; message: string }
  /** Its WebGPU device was lost: the engine is restarted on wasm. */
  | { type: 'device-lost'; message: string }
  /** It stopped answering: alive, but stuck (facade/hang-watchdog.ts); it is terminated. */
  | { type: 'hung'; message: string };

/** One engine behind a worker (or a stand-in, in tests). */
export interface EngineInstance {
  api: EngineApi;
  /** Settles once, when the instance dies; never while it lives. */
  died: Promise<EngineDeath>;
  /** Stops it for good (its later death signals are ignored). */
  terminate(): void;
}

export interface RestartEvent {
  /** Restarts since the client was made, this one included. */
  restarts: number;
  death: EngineDeath;
  /** The device the model is reloaded on (`wasm` after a device loss). */
  device: DeviceChoice | null;
}

export interface SupervisorOptions {
  /** Restarts in a row without a successful load before the supervisor gives up (default 3). */
  maxRestarts?: number;
  onRestart?: (event: RestartEvent) => void;
}

/**
 * Keeps an engine alive across worker deaths. Its `api` is the engine's interface: each call goes
 * to the live instance and is raced against that instance's death, since a call into a dead
 * worker never settles. When the instance dies, the calls it held reject with
 * `engine_unavailable` (503) saying the engine restarted; a new instance is started and the
 * model reloaded with the last LoadOptions (on wasm after a WebGPU device loss); calls made
 * meanwhile wait for it. After `maxRestarts` deaths in a row without a successful load, it gives
 * up and every call rejects with `engine_unavailable`.
 */
export class EngineSupervisor {
  readonly api: EngineApi;
  readonly #spawn: () => EngineInstance;
  readonly #maxRestarts: number;
  readonly #onRestart: ((event: RestartEvent) => void) | undefined;
  /** Rejecters of the calls each instance holds: all of them fail when it dies. */
  readonly #pending = new WeakMap<EngineInstance, Set<(e: JevError) => void>>();
  readonly #retired = new WeakSet<EngineInstance>();
  #instance: EngineInstance;
  #ready: Promise<void> = Promise.resolve();
  /** The reload of the latest restart, where it reloads a model. */
  #reloading: Promise<EngineStatus> | null = null;
  #last: { options: LoadOptions; onEvent: ((e: LoadEvent) => void) | undefined } | null = null;
  /** Loads asked for by the client so far. */
  #loads = 0;
  #avoidWebGpu = false;
  #restarts = 0;
  #failuresInARow = 0;
  #gaveUp: JevError | null = null;
  #terminated = false;
  /** Calls not yet sent to an instance (waiting out a restart), and those cancelled meanwhile. */
  readonly #unsent = new Set<string>();
  readonly #cancelledUnsent = new Set<string>();

  constructor(spawn: () => EngineInstance, options: SupervisorOptions = {}) {
    this.#spawn = spawn;
    this.#maxRestarts = options.maxRestarts ?? 3;
    this.#onRestart = options.onRestart;
    this.#instance = this.#start();
    this.api = {
      load: async (options, onEvent) => {
        const mine = ++this.#loads;
        this.#last = { options, onEvent };
        let attempt = this.#guard((api) => api.load(this.#effective(options), onEvent));
        let renewed = false;
        for (;;) {
          try {
            const status = await attempt;
            this.#failuresInARow = 0;
            return status;
          } catch (e) {
            // Its worker's onnxruntime build cannot run the device this load resolved (the
            // wasm-only build, asked for WebGPU): a fresh worker can, once.
            if (!renewed && needsOtherRuntime(e) && this.#loads === mine && !this.#terminated) {
              renewed = true;
              attempt = this.#renew(this.#effective(options), onEvent);
              continue;
            }
            // The worker died while loading: the restart reloads these same options, and its
            // outcome is this load's (unless a later load superseded it).
            if (!diedUnder(e) || this.#loads !== mine || !this.#reloading) throw e;
            attempt = this.#reloading;
          }
        }
      },
      status: () => this.#guard((api) => api.status()),
      models: () => this.#guard((api) => api.models()),
      decide: (body: unknown, call: CallHandle) => this.#guard((api) => api.decide(body, call), call.id),
      extract: (body: unknown, call: CallHandle) => this.#guard((api) => api.extract(body, call), call.id),
      chat: (body: unknown, call: CallHandle, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>) =>
        this.#guard((api) => api.chat(body, call, onChunk), call.id),
      cancel: async (callId: string) => {
        // A call not sent yet is never sent: a cancel must not overtake the call it names.
        if (this.#unsent.has(callId)) return void this.#cancelledUnsent.add(callId);
        // Otherwise it goes straight to the live instance (a call on a dead one died with it).
        await this.#within(this.#instance, this.#instance.api.cancel(callId)).catch(() => undefined);
      },
      debug: (action: DebugAction) => this.drill(action),
      // A restarted instance starts with an empty cache: clearing a dead one is moot.
      clearCache: () => this.#guard((api) => api.clearCache()),
      // Unloaded, a restart reloads nothing: the next load says what to load.
      unload: () => {
        this.#last = null;
        return this.#guard((api) => api.unload());
      },
    };
  }

  /** Restarts so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /**
   * Runs a fault drill on the live instance. A crash, or a device loss that applied, resolves
   * once the supervisor has seen the death and begun the restart; false where the drill did
   * not apply (no worker, no WebGPU device).
   */
  async drill(action: DebugAction): Promise<boolean> {
    await this.#settled();
    const instance = this.#instance;
    let applied: boolean;
    try {
      applied = await this.#within(instance, instance.api.debug(action));
    } catch (e) {
      // The drill's own reply may lose the race against the death it caused.
      if (JevError.is(e) && e.code === 'engine_unavailable' && this.#retired.has(instance)) return true;
      throw e;
    }
    if (applied && (action.type === 'crash' || action.type === 'lose-device')) await instance.died;
    return applied;
  }

  /** Stops the engine for good: calls in flight and later ones reject with `engine_unavailable`. */
  terminate(): void {
    if (this.#terminated) return;
    this.#terminated = true;
    this.#retire(this.#instance, unavailable('The client was terminated.'));
  }

  /** Resolves once no restart is under way (a restart that begins meanwhile is waited for too). */
  async #settled(): Promise<void> {
    let ready: Promise<void>;
    do {
      ready = this.#ready;
      await ready;
    } while (ready !== this.#ready);
  }

  #start(): EngineInstance {
    const instance = this.#spawn();
    this.#pending.set(instance, new Set());
    void instance.died.then((death) => this.#onDeath(instance, death));
    return instance;
  }

  /**
   * Waits out a restart, then runs `call` on the live instance, raced against its death. A call
   * named `callId` that is cancelled before it is sent rejects with an AbortError, unsent.
   */
  async #guard<T>(call: (api: EngineApi) => Promise<T>, callId?: string): Promise<T> {
    if (this.#terminated) throw unavailable('The client was terminated.');
    if (callId !== undefined) this.#unsent.add(callId);
    try {
      await this.#settled();
    } finally {
      if (callId !== undefined) this.#unsent.delete(callId);
    }
    if (callId !== undefined && this.#cancelledUnsent.delete(callId)) throw new DOMException('The request was aborted.', 'AbortError');
    if (this.#terminated) throw unavailable('The client was terminated.');
    if (this.#gaveUp) throw this.#gaveUp;
    const instance = this.#instance;
    return this.#within(instance, call(instance.api));
  }

  /** `promise`, or `engine_unavailable` as soon as `instance` dies. */
  #within<T>(instance: EngineInstance, promise: Promise<T>): Promise<T> {
    const pending = this.#pending.get(instance);
    if (!pending || this.#retired.has(instance)) {
      promise.catch(() => undefined);
      return Promise.reject(unavailable('The engine restarted; send the request again.'));
    }
    return new Promise<T>((resolve, reject) => {
      pending.add(reject);
      promise.then(resolve, reject).finally(() => pending.delete(reject));
    });
  }

  #retire(instance: EngineInstance, error: JevError): void {
    if (this.#retired.has(instance)) return;
    this.#retired.add(instance);
    const pending = this.#pending.get(instance);
    this.#pending.delete(instance);
    instance.terminate();
    for (const reject of pending ?? []) reject(error);
  }

  /**
   * Replaces the live instance with a fresh one and loads `options` there: not a death (no restart
   * is counted or reported). The calls the old instance held reject with `engine_unavailable`;
   * calls made meanwhile wait for this load.
   */
  #renew(options: LoadOptions, onEvent: ((e: LoadEvent) => void) | undefined): Promise<EngineStatus> {
    this.#retire(this.#instance, unavailable('The engine moved to a new worker to load on another device; send the request again.'));
    const next = this.#start();
    this.#instance = next;
    const loading = this.#within(next, next.api.load(options, onEvent));
    this.#ready = loading.then(
      () => undefined,
      () => undefined,
    );
    return loading;
  }

  #effective(options: LoadOptions): LoadOptions {
    return this.#avoidWebGpu && options.device === 'auto' ? { ...options, device: 'wasm' } : options;
  }

  #onDeath(instance: EngineInstance, death: EngineDeath): void {
    if (instance !== this.#instance || this.#retired.has(instance) || this.#terminated) return;
    this.#restarts += 1;
    this.#failuresInARow += 1;
    const lostGpu = death.type === 'device-lost';
    if (lostGpu) this.#avoidWebGpu = true;
    const reload = this.#last && { ...this.#last, options: lostGpu ? { ...this.#last.options, device: 'wasm' as const } : this.#effective(this.#last.options) };
    const restarting = this.#failuresInARow <= this.#maxRestarts;
    const where = reload && lostGpu ? ' on wasm' : '';
    this.#retire(
      instance,
      unavailable(
        restarting
          ? `The engine stopped while serving this request (${death.message}); it restarted by itself${where}: send the request again.`
          : `The engine stopped (${death.message}) ${this.#failuresInARow} times in a row and was not restarted again; reload the page.`,
        death,
      ),
    );
    if (!restarting) {
      this.#reloading = null;
      this.#gaveUp = unavailable(`The engine stopped ${this.#failuresInARow} times in a row (last: ${death.message}) and was not restarted again; reload the page.`, death);
      return;
    }
    // Later restarts reload what this one loads (wasm stays wasm once the device is gone).
    if (reload) this.#last = reload;
    const next = this.#start();
    this.#instance = next;
    if (reload && lostGpu) reload.onEvent?.({ type: 'fallback', from: 'webgpu', to: 'wasm', reason: death.message });
    // A failed reload is the new instance's state (calls then see its load error); a death
    // during it is another restart.
    const reloading = reload
      ? this.#within(next, next.api.load(reload.options, reload.onEvent)).then((status) => {
          if (this.#instance === next) this.#failuresInARow = 0;
          return status;
        })
      : null;
    reloading?.catch(() => undefined);
    this.#reloading = reloading;
    this.#ready = reloading ? reloading.then(
      () => undefined,
      () => undefined,
    ) : Promise.resolve();
    this.#onRestart?.({ restarts: this.#restarts, death, device: reload?.options.device ?? null });
  }
}

/** Whether a load failed because its worker's onnxruntime build cannot run the device it resolved (runtime-env.ts `pinRuntimeBuild`). */
function needsOtherRuntime(e: unknown): boolean {
  return JevError.is(e) && e.code === 'engine_unavailable' && e.details?.['reason'] === RUNTIME_BUILD_REASON;
}

/** Whether a call failed because the instance serving it died. */
function diedUnder(e: unknown): boolean {
  return JevError.is(e) && e.code === 'engine_unavailable' && typeof e.details?.['death'] === 'string';
}

function unavailable(message: string, death?: EngineDeath): JevError {
  return new JevError('engine_unavailable', message, { param: null, ...(death ? { details: { death: death.type } } : {}) });
}
