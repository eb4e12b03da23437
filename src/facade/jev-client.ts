import type { ChatCompletion, ChatCompletionChunk, DecisionResponse, ModelList } from '../contract/index.ts';
import type { EngineStatus, LoadEvent, LoadOptions } from '../protocol/engine-api.ts';

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
    create(request: unknown, options?: CallOptions): Promise<DecisionResponse>;
  };
  chat: {
    completions: {
      create(request: { stream: true } & Record<string, unknown>, options?: CallOptions): Promise<AsyncIterable<ChatCompletionChunk>>;
      create(request: unknown, options?: CallOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
    };
  };
  models: { list(): Promise<ModelList> };
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
  /** Stops the engine's worker; the client cannot be used afterwards. */
  terminate(): void;
}
