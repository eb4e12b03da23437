import type { ChatCompletionChunk } from '../contract/index.ts';
import { toJevError } from '../contract/index.ts';

/**
 * While no chunk comes (a long prefill, a busy queue), a comment line (`: keep-alive`, which SSE
 * readers skip) is sent every this many ms. A reader that went away is then seen within about
 * this time even when the engine writes nothing: through the service worker, Chromium tells the
 * worker that the page cancelled a response body only when the worker next writes to it.
 */
export const SSE_KEEPALIVE_MS = 1000;

/**
 * Chat chunks as server-sent events: `data: {chunk}` per chunk, then `data: [DONE]`. An error
 * after the stream began is sent as a last `data: {"error":…}` event (OpenAI's convention).
 * Cancelling the stream (the reader went away) calls `onCancel`, which stops generation.
 */
export function sseStream(chunks: AsyncIterable<ChatCompletionChunk>, onCancel: () => void, keepAliveMs = SSE_KEEPALIVE_MS): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  /** The chunk being waited for; kept across pulls that ended with a keep-alive. */
  let next: Promise<IteratorResult<ChatCompletionChunk>> | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        next ??= iterator.next();
        let timer: ReturnType<typeof setTimeout> | undefined;
        const quiet = new Promise<'quiet'>((resolve) => (timer = setTimeout(() => resolve('quiet'), keepAliveMs)));
        const result = await Promise.race([next, quiet]).finally(() => clearTimeout(timer));
        if (result === 'quiet') {
          controller.enqueue(encoder.encode(': keep-alive\n\n'));
          return;
        }
        next = null;
        if (result.done) {
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(result.value)}\n\n`));
      } catch (e) {
        next = null;
        const error = toJevError(e);
        if (error.code !== 'aborted') controller.enqueue(encoder.encode(`data: ${JSON.stringify(error.toBody())}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      onCancel();
      // A pending next() keeps the generator busy: return() would wait behind it.
      if (!next) await iterator.return?.();
    },
  });
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
} as const;
