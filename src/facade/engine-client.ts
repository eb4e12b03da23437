import type { ChatCompletion, ChatCompletionChunk } from '../contract/index.ts';
import type { CallHandle, EngineApi, EngineStatus } from '../protocol/engine-api.ts';
import { newCallId } from './call-id.ts';
import type { CallOptions, JevClient } from './jev-client.ts';

/** What a client needs of an engine: its API with callbacks made transferable (Comlink.proxy). */
export interface EngineBinding {
  api: EngineApi;
  wrapCallback<F extends (...args: never[]) => unknown>(fn: F): F;
  terminate(): void;
}

/** Builds the client over an engine, in this thread or behind a worker. */
export function clientForEngine(binding: EngineBinding, ready: Promise<EngineStatus>): JevClient {
  const { api } = binding;

  async function call<T>(options: CallOptions | undefined, run: (handle: CallHandle) => Promise<T>): Promise<T> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const handle = { id: newCallId() };
    const onAbort = () => void api.cancel(handle.id);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await run(handle);
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  const create = async (request: unknown, options?: CallOptions) => {
    const stream = !!(request && typeof request === 'object' && (request as { stream?: unknown }).stream === true);
    if (!stream) return call(options, (h) => api.chat(request, h) as Promise<ChatCompletion>);
    return streamChat(request, options);
  };

  function streamChat(request: unknown, options?: CallOptions): AsyncIterable<ChatCompletionChunk> {
    const chunks: ChatCompletionChunk[] = [];
    let wake: (() => void) | null = null;
    let done = false;
    let failure: unknown = null;
    const notify = () => {
      wake?.();
      wake = null;
    };
    const onChunk = binding.wrapCallback((chunk: ChatCompletionChunk) => {
      chunks.push(chunk);
      notify();
    });
    const finished = call(options, (h) => api.chat(request, h, onChunk)).then(
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
    void finished;
    return {
      async *[Symbol.asyncIterator]() {
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
      },
    };
  }

  return {
    decisions: { create: (request, options) => call(options, (h) => api.decide(request, h)) },
    chat: { completions: { create: create as JevClient['chat']['completions']['create'] } },
    models: { list: () => api.models() },
    ready,
    status: () => api.status(),
    terminate: () => binding.terminate(),
  };
}
