import { checkBodyBounds, withDecisionEndpoints, type ChatCompletion, type ChatCompletionChunk } from '../contract/index.ts';
import type { CallHandle, DebugAction, EngineApi, LoadEvent, LoadOptions } from '../protocol/engine-api.ts';
import { Admission, type AdmissionOptions } from './admission.ts';
import { newCallId } from './call-id.ts';
import { checkDecisionPolicy, openAIDecisions, type DecisionPolicy } from './openai-decisions.ts';
import { ProfileStore } from './profile-store.ts';
import type { CallOptions, ClientSurface, JevClient } from './jev-client.ts';

/** What a client needs of an engine: its API with callbacks made transferable (Comlink.proxy). */
export interface EngineBinding {
  api: EngineApi;
  wrapCallback<F extends (...args: never[]) => unknown>(fn: F): F;
  terminate(): void;
  /** Fault drills through the supervisor (which waits for the death it causes); else the engine's own. */
  drill?(action: DebugAction): Promise<boolean>;
  restarts?(): number;
}

/**
 * Builds the client over an engine, in this thread or behind a worker. Its `fetch` is made by
 * `serveFetch` from the client's own methods: the HTTP surface is a layer above this one
 * (`src/client/client-for-engine.ts` passes http/'s handler).
 */
export function engineClient(
  binding: EngineBinding,
  initial: LoadOptions,
  serveFetch: (surface: ClientSurface) => typeof fetch,
  onProgress?: (event: LoadEvent) => void,
  limits: AdmissionOptions = {},
  policy: DecisionPolicy = {},
): JevClient {
  const { api } = binding;
  checkDecisionPolicy(policy);
  const admission = new Admission(limits);
  const profiles = new ProfileStore();
  let current = initial;
  const load = (options: Partial<LoadOptions>, progress = onProgress) => {
    current = { ...current, ...options };
    return api.load(current, progress ? binding.wrapCallback(progress) : undefined);
  };
  const drill = (action: DebugAction) => (binding.drill ? binding.drill(action) : api.debug(action));
  const ready = load({});
  ready.catch(() => undefined); // surfaced through `client.ready` and every call

  async function call<T>(
    options: CallOptions | undefined,
    run: (handle: CallHandle) => Promise<T>,
    handle: CallHandle = { id: newCallId() },
  ): Promise<T> {
    const signal = options?.signal;
    if (signal?.aborted) throw abortError(signal);
    const leave = admission.enter();
    let running: Promise<T>;
    try {
      running = run(handle);
    } catch (e) {
      leave();
      throw e;
    }
    running.then(leave, leave);
    if (!signal) return running;
    // Rejects at once on abort (a queued request is dropped by the engine and never runs; a
    // running one stops at its next token), even if the engine never answers.
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        void api.cancel(handle.id).catch(() => undefined);
        reject(abortError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      running.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  // Every request enters through `create` or `decisions.create` (the methods, client.fetch, the service
  // worker): its shape is bounded here, iteratively, before anything clones it into the worker.
  const create = async (request: unknown, options?: CallOptions) => {
    checkBodyBounds(request);
    const stream = !!(request && typeof request === 'object' && (request as { stream?: unknown }).stream === true);
    if (!stream) return call(options, (h) => api.chat(request, h) as Promise<ChatCompletion>);
    return streamChat(request, options);
  };

  /**
   * A streamed chat: resolves once the first chunk (the role) arrives, so that a refused request
   * rejects here, as an HTTP client sees its status before the stream; then yields the chunks.
   */
  function streamChat(request: unknown, options?: CallOptions): Promise<AsyncIterable<ChatCompletionChunk>> {
    const chunks: ChatCompletionChunk[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let failure: unknown = null;
    let started: (() => void) | null = null;
    const firstChunk = new Promise<void>((resolve) => (started = resolve));
    const notify = () => {
      started?.();
      wake?.();
      wake = null;
    };
    const onChunk = binding.wrapCallback((chunk: ChatCompletionChunk) => {
      chunks.push(chunk);
      notify();
    });
    const handle = { id: newCallId() };
    const finished = call(options, (h) => api.chat(request, h, onChunk), handle).then(
      () => {
        done = true;
        notify();
      },
      (e) => {
        failure = e;
        done = true;
        notify();
      },
    );
    const iterable: AsyncIterable<ChatCompletionChunk> = {
      async *[Symbol.asyncIterator]() {
        try {
          for (;;) {
            if (chunks.length > 0) {
              yield chunks.shift()!;
              continue;
            }
            if (done) {
              if (failure) throw failure;
              return;
            }
            await new Promise<void>((r) => (wake = r));
          }
        } finally {
          // The consumer stopped reading (break, return, or an error): stop generating.
          if (!done) void api.cancel(handle.id);
        }
      },
    };
    return Promise.race([firstChunk, finished]).then(() => {
      if (failure && chunks.length === 0) throw failure;
      return iterable;
    });
  }

  // Every decision enters here (the methods, client.fetch, the service worker): profile ids resolve here.
  const decide = async (request: unknown, options?: CallOptions) => {
    checkBodyBounds(request);
    const body = profiles.resolve(request);
    return call(options, (h) => api.decide(body, h));
  };
  const listModels = async () => withDecisionEndpoints(await api.models());
  const surface: ClientSurface = {
    decisions: {
      create: decide,
      createOpenAI: openAIDecisions({
        create: decide,
        profile: (id) => profiles.get(id),
        modelIds: async () => (await listModels()).data.map((m) => m.id),
        policy,
      }),
      policy,
    },
    extractions: {
      create: async (request: unknown, options?: CallOptions) => {
        checkBodyBounds(request);
        return call(options, (h) => api.extract(request, h));
      },
    },
    chat: { completions: { create: create as JevClient['chat']['completions']['create'] } },
    models: { list: listModels },
  };
  return {
    ...surface,
    calibration: profiles.view(),
    fetch: serveFetch(surface),
    ready,
    load: (options, progress) => load(options, progress),
    unload: () => api.unload(),
    status: async () => ({ ...(await api.status()), queue: { inFlight: admission.inFlight, maxQueued: admission.maxQueued } }),
    cache: { clear: () => api.clearCache() },
    terminate: () => binding.terminate(),
    debug: {
      crashWorker: (mode = 'throw') => drill({ type: 'crash', mode }),
      hold: (after) => drill({ type: 'hold', after }),
      release: () => drill({ type: 'release' }),
      loseDevice: () => drill({ type: 'lose-device' }),
      restarts: () => binding.restarts?.() ?? 0,
    },
  };
}

/** The signal's reason where it is an AbortError, else an AbortError (the client's contract). */
function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  return new DOMException('The request was aborted.', 'AbortError');
}
