import type { CalibrationProfile, ChatCompletion, ChatCompletionChunk, DecisionResponse, ExtractionResponse, ModelList, OpenAIDecision } from '../contract/index.ts';
import type { EngineStatus, LoadEvent, LoadOptions, UnloadReport } from '../protocol/engine-api.ts';

/**
 * Fault drills, safe in production (docs/reliability.md): each runs the recovery path a real
 * fault would. Requests in flight fail with `engine_unavailable`; the engine restarts by itself.
 */
export interface EngineDebug {
  /**
   * Makes the engine's worker die: `throw` (default) an uncaught error, `exit` the worker closes
   * itself, `hang` it loops forever without answering (the watchdog sees it after
   * `limits.hangAfterMs` and terminates it). Resolves true once the supervisor has seen the death
   * and begun the restart; false where there is no worker to crash (an in-process engine).
   */
  crashWorker(mode?: 'throw' | 'exit' | 'hang'): Promise<boolean>;
  /**
   * Lets `after` more forward passes run, then holds the next one until `release()`: a request
   * is then still running, by construction, while a test or a drill acts. A held request can
   * still be cancelled; the engine keeps answering everything else.
   */
  hold(after: number): Promise<boolean>;
  release(): Promise<boolean>;
  /**
   * Destroys the WebGPU device the model runs on (`GPUDevice.destroy()` in the worker). Resolves
   * true once the supervisor has seen the loss (the model then reloads on wasm); false when the
   * model is not on WebGPU.
   */
  loseDevice(): Promise<boolean>;
  /** Restarts of the engine since the client was made. */
  restarts(): number;
}

/**
 * The client's calibration profiles (docs/decisions.md, "Extension fields"), kept in the page's
 * memory. A decision request may name a saved profile by id (`calibration: "<id>"`,
 * `prediction_set: { alpha, profile: "<id>" }`), through the client's methods, `client.fetch` and
 * the service worker alike; the client sends the engine the profile itself.
 */
export interface CalibrationStore {
  /** Validates and saves a profile, replacing one with the same id; throws JevError `invalid_request` naming the field. */
  save(profile: unknown): CalibrationProfile;
  get(id: string): CalibrationProfile | null;
  /** The saved profiles, in the order they were first saved. */
  list(): CalibrationProfile[];
  /** Whether a profile with this id was saved (and is now deleted). */
  delete(id: string): boolean;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/**
 * The client a page or an embedding app holds: the shapes of the HTTP specification, as methods.
 * A refused call rejects with an Error carrying `status` and `error` (the HTTP error body's
 * object); an aborted one with an AbortError.
 */
export interface JevClient {
  decisions: {
    /** TypeSafe's Jev shape (`POST /inference/jev/api/alpha/decisions`). */
    create(request: unknown, options?: CallOptions): Promise<DecisionResponse>;
    /**
     * OpenAI's Decisions shape (`POST /v1/decisions`, `openai.decisions.create`), served by `create`:
     * the same engine path and numbers; a question whose label mass is below the client's
     * `refuseBelowLabelMass` (or its profile's) answers `{ type: "refusal" }` (docs/decisions.md).
     */
    createOpenAI(request: unknown, options?: CallOptions): Promise<OpenAIDecision>;
    /** The client's decision policy as `createClient` was given it (the AI SDK provider's default refusal floor). */
    readonly policy?: { readonly refuseBelowLabelMass?: number | undefined };
  };
  extractions: {
    /** Typed fields read from one state (`POST /v1/extractions`, the AI SDK's extraction shape: docs/extraction.md). */
    create(request: unknown, options?: CallOptions): Promise<ExtractionResponse>;
  };
  chat: {
    completions: {
      create(request: { stream: true } & Record<string, unknown>, options?: CallOptions): Promise<AsyncIterable<ChatCompletionChunk>>;
      create(request: unknown, options?: CallOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
    };
  };
  models: { list(): Promise<ModelList> };
  /** Calibration profiles that decision requests may name by id. */
  calibration: CalibrationStore;
  /**
   * A `fetch`-compatible function serving the HTTP paths of the specification in this page
   * (no service worker, no network): give it to clients that take a custom fetch.
   */
  fetch: typeof fetch;
  /** Resolves once the first model is loaded (rejects if loading failed). */
  ready: Promise<EngineStatus>;
  /** Loads another model (or the same on another device or dtype); calls wait for it. */
  load(options: Partial<LoadOptions>, onProgress?: (event: LoadEvent) => void): Promise<EngineStatus>;
  status(): Promise<EngineStatus>;
  /**
   * Frees the model and its caches (`status().memory`) once the calls before it are done, and
   * resolves with what it freed; later calls are refused (`engine_unavailable`) until `load()`.
   */
  unload(): Promise<UnloadReport>;
  /**
   * The prefix cache (docs/prefix-cache.md): `clear()` drops every cached prompt, so that the next
   * requests start cold (a remote client rejects: its server's cache is not reachable from here).
   */
  cache: { clear(): Promise<void> };
  /** Stops the engine's worker; the client cannot be used afterwards. */
  terminate(): void;
  /** Fault drills; absent where no engine runs here (a remote client). */
  debug?: EngineDebug;
}

/** The requests a client serves, as methods: what its HTTP surface (`client.fetch`, the service worker) calls. */
export type ClientSurface = Pick<JevClient, 'decisions' | 'extractions' | 'chat' | 'models'>;
