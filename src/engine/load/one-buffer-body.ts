import { releaseBuffer } from './release-buffer.ts';

/**
 * Response bodies whose bytes live in one buffer, released the moment they have been read.
 *
 * transformers.js reads a model file's body chunk by chunk into a buffer of its own (to report
 * progress). Each chunk a network or cache stream hands to JavaScript is a new ArrayBuffer, so
 * reading a 520 MiB file leaves 520 MiB of chunks behind as garbage, which stays resident until
 * a full garbage collection — in a worker that then serves from wasm memory, measured, for as
 * long as it was watched. These bodies hand out views over a single buffer instead: the network
 * is read into it with a BYOB reader (no chunk of its own is made), a cached body is cut into views,
 * and the buffer is released (release-buffer.ts) as soon as the reader has taken the last view.
 */

/** The size of each view handed to the reader: progress is reported per view. */
export const VIEW_BYTES = 1 << 20;

/**
 * A stream of views over `buffer` (or over the bytes of a view of one), each `VIEW_BYTES` long (the
 * last shorter), that releases the buffer once the reader has read past the last view, or cancels
 * (unless `release` is false: the buffer is then still the caller's; a view's buffer is released
 * only where the view covers all of it).
 */
export function bufferBody(source: ArrayBuffer | Uint8Array<ArrayBuffer>, viewBytes = VIEW_BYTES, release = true): ReadableStream<Uint8Array> {
  const { buffer, byteOffset, byteLength } = source instanceof Uint8Array ? source : new Uint8Array(source);
  const done = () => {
    if (release && byteOffset === 0 && byteLength === buffer.byteLength) releaseBuffer(buffer);
  };
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        // Pulled only when the reader asks (high-water mark 0): the previous view has been taken.
        if (at >= byteLength) {
          controller.close();
          done();
          return;
        }
        const length = Math.min(viewBytes, byteLength - at);
        controller.enqueue(new Uint8Array(buffer, byteOffset + at, length));
        at += length;
      },
      cancel() {
        done();
      },
    },
    { highWaterMark: 0 },
  );
}

/** A body that continues an interrupted download, or may itself be interrupted (resume-fetch.ts). */
export interface Resumable {
  /** The bytes received before (an earlier download's): they open the buffer and are the first view read. */
  prefix?: Uint8Array | null;
  /** Hears what was received (a view over the buffer, the prefix included) when the source fails mid-way. */
  onBreak?: (received: Uint8Array<ArrayBuffer>) => Promise<void>;
}

/**
 * `source` (a fetch body) read into one buffer of `size` bytes (0: unknown; grown if the body turns out longer),
 * as a stream of views over that buffer. When the source ends, `onEnd` takes the buffer (filled
 * exactly: it owns it, and must release it) before the stream closes; an `onEnd` that throws
 * errors the stream. Without `onEnd`, or if the reader cancels, the buffer is released.
 * A byte stream is read with a BYOB reader, straight into the buffer; any other is copied in.
 * A `resumable` body reads a byte stream into a small buffer of its own and copies it in (a BYOB
 * read that fails takes the buffer it was given with it: the bytes received must survive it).
 */
export function oneBufferBody(source: ReadableStream<Uint8Array>, size: number, onEnd?: (bytes: ArrayBuffer) => Promise<void>, resumable?: Resumable): ReadableStream<Uint8Array> {
  const byob = isByteStream(source);
  const reader = byob ? source.getReader({ mode: 'byob' }) : source.getReader();
  // Allocated at the first read: a body that is cancelled unread (a Range request answered in
  // full, as transformers.js' metadata check makes) costs nothing.
  let buffer: ArrayBuffer | null = null;
  let filled = 0;
  const release = () => {
    if (buffer) releaseBuffer(buffer);
    buffer = null;
  };
  /** Room for `n` more bytes, growing into a copy when the body is longer than announced. */
  const room = (n: number): ArrayBuffer => {
    if (!buffer) buffer = new ArrayBuffer(Math.max(size > 0 ? size : VIEW_BYTES, n));
    if (filled + n <= buffer.byteLength) return buffer;
    const bigger = new ArrayBuffer(Math.max(buffer.byteLength * 2, filled + n));
    new Uint8Array(bigger).set(new Uint8Array(buffer, 0, filled));
    releaseBuffer(buffer);
    return (buffer = bigger);
  };
  const end = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    let whole = new ArrayBuffer(0);
    if (buffer && filled === buffer.byteLength) whole = buffer;
    else if (buffer) {
      // Shorter than the room made for it: the bytes read, in a buffer of their own.
      whole = buffer.slice(0, filled);
      releaseBuffer(buffer);
    }
    buffer = null;
    if (onEnd) await onEnd(whole);
    else releaseBuffer(whole);
    controller.close();
  };
  /** Appends bytes read into a buffer of their own, and hands the reader their view. */
  const append = (controller: ReadableStreamDefaultController<Uint8Array>, value: Uint8Array) => {
    const target = room(value.byteLength);
    new Uint8Array(target, filled, value.byteLength).set(value);
    controller.enqueue(new Uint8Array(target, filled, value.byteLength));
    filled += value.byteLength;
  };
  const prefix = resumable?.prefix;
  let opening = !!prefix && prefix.byteLength > 0;
  if (opening) {
    room(Math.max(size, prefix!.byteLength));
    new Uint8Array(buffer!).set(prefix!);
    filled = prefix!.byteLength;
  }
  let scratch: ArrayBuffer | null = null;
  /** A resumable body's read: copied in from a buffer of its own; a failure hands on what was received. */
  const pullCopying = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    if (opening) {
      opening = false;
      return controller.enqueue(new Uint8Array(buffer!, 0, filled));
    }
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      if (byob) {
        r = await (reader as ReadableStreamBYOBReader).read(new Uint8Array((scratch ??= new ArrayBuffer(VIEW_BYTES))));
        scratch = r.value ? (r.value.buffer as ArrayBuffer) : null;
      } else r = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
    } catch (e) {
      if (buffer && filled > 0) await resumable!.onBreak?.(new Uint8Array(buffer, 0, filled)).catch(() => undefined);
      release();
      throw e;
    }
    return r.done || !r.value ? end(controller) : append(controller, r.value);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (resumable) return pullCopying(controller);
        // Pulled only when the reader asks (high-water mark 0): it has taken the previous view.
        if (!byob) {
          const { value, done } = await (reader as ReadableStreamDefaultReader<Uint8Array>).read();
          return done ? end(controller) : append(controller, value);
        }
        const byobReader = reader as ReadableStreamBYOBReader;
        if (buffer && filled === buffer.byteLength) {
          // Full, as announced: does anything follow? Read into a small buffer of its own.
          const { value, done } = await byobReader.read(new Uint8Array(64 << 10));
          return done || !value ? end(controller) : append(controller, value);
        }
        const target = room(1);
        // A BYOB read moves the buffer to a new ArrayBuffer object (the same memory) and fills part of it.
        const { value, done } = await byobReader.read(new Uint8Array(target, filled, Math.min(VIEW_BYTES, target.byteLength - filled)));
        if (value) buffer = value.buffer as ArrayBuffer;
        if (done || !value) return end(controller);
        controller.enqueue(value);
        filled += value.byteLength;
      },
      async cancel(reason) {
        release();
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Whether a stream can be read with a BYOB reader (a byte stream, as fetch bodies are). */
function isByteStream(stream: ReadableStream<Uint8Array>): boolean {
  try {
    stream.getReader({ mode: 'byob' }).releaseLock();
    return true;
  } catch {
    return false;
  }
}
