import type { ChatCompletionChunk } from '../contract/index.ts';
import { toJevError } from '../contract/index.ts';

/**
 * Chat chunks as server-sent events: `data: {chunk}` per chunk, then `data: [DONE]`. An error
 * after the stream began is sent as a last `data: {"error":…}` event (OpenAI's convention).
 * Cancelling the stream (the reader went away) calls `onCancel`, which stops generation.
 */
export function sseStream(chunks: AsyncIterable<ChatCompletionChunk>, onCancel: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await iterator.next();
        if (done) {
          controller.enqueue(encoder.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(`data: ${JSON.stringify(value)}\n\n`));
      } catch (e) {
        const error = toJevError(e);
        if (error.code !== 'aborted') controller.enqueue(encoder.encode(`data: ${JSON.stringify(error.toBody())}\n\n`));
        controller.close();
      }
    },
    async cancel() {
      onCancel();
      await iterator.return?.();
    },
  });
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
} as const;
