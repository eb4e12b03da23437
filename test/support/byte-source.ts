/** Byte streams for tests of the engine's fetch: seeded bytes, and a fetch body sending them in chunks. */
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** `n` seeded random bytes, so that a misplaced or lost chunk shows. */
export function pattern(n: number, seed = 1): Uint8Array {
  const random = seededRandom(seed);
  return Uint8Array.from({ length: n }, () => Math.floor(random() * 256));
}

/** A byte stream (as fetch bodies are) sending `bytes` in chunks of the given sizes, cycled. */
export function byteSource(bytes: Uint8Array, chunks: number[]): { stream: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let at = 0;
  let i = 0;
  let cancelled = false;
  const stream = new ReadableStream({
    type: 'bytes',
    pull(controller) {
      if (at >= bytes.length) {
        controller.close();
        // A BYOB read waiting when a byte source closes is answered with no bytes (the streams spec).
        controller.byobRequest?.respond(0);
        return;
      }
      const n = Math.min(chunks[i++ % chunks.length]!, bytes.length - at);
      controller.enqueue(bytes.slice(at, at + n));
      at += n;
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, cancelled: () => cancelled };
}
