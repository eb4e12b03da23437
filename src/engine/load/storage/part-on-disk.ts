import { releaseBuffer } from '../release-buffer.ts';
import type { LoadTimer } from '../load-timing.ts';

/** Reads of one file, synchronous (an OPFS sync access handle's; `fs.readSync` in tests). */
export interface PartReader {
  /** Reads `into.byteLength` bytes from `at` into `into`; returns how many were read. */
  read(into: Uint8Array, at: number): number;
  close(): void;
}

/**
 * A kept part mounted for onnxruntime without being read first (issue 62: at fp32 a return visit
 * held the 409 MiB part in JavaScript while onnxruntime copied it into wasm memory, so the load's
 * peak held the weights twice). onnxruntime-web reads a mounted external-data file by asking it for
 * `byteLength` and for `subarray(offset, offset + length)` once per initializer, synchronously,
 * inside `InferenceSession.create`, and copies what it gets into wasm memory at once
 * (test/engine/part-on-disk.test.ts runs that in onnxruntime-web): this answers each such
 * `subarray` with that range read from disk into one scratch buffer, reused, so that the
 * JavaScript side holds the largest initializer at most, never the part.
 *
 * A `Uint8Array` (of no elements) so that onnxruntime takes it as bytes given; its `byteLength`
 * is the part's. Only `subarray` reads. `close()` once the session exists (or failed): the file's
 * handle is released and the scratch buffer with it.
 */
export class PartOnDisk extends Uint8Array {
  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array;
  }

  #reader: PartReader | null;
  #scratch: ArrayBuffer = new ArrayBuffer(0);
  readonly #size: number;
  readonly #timer: LoadTimer | null;
  /** Bytes read so far, and the largest scratch buffer held: for tests and the load's report. */
  bytesRead = 0;
  scratchBytes = 0;

  constructor(reader: PartReader, size: number, timer: LoadTimer | null = null) {
    super(0);
    this.#reader = reader;
    this.#size = size;
    this.#timer = timer;
    Object.defineProperty(this, 'byteLength', { value: size });
  }

  override subarray(begin = 0, end: number = this.#size): Uint8Array<ArrayBuffer> {
    const reader = this.#reader;
    if (!reader) throw new Error('this kept part was closed');
    if (!(begin >= 0 && end <= this.#size && begin <= end)) throw new RangeError(`bytes ${begin}–${end} are outside this part of ${this.#size} bytes`);
    const length = end - begin;
    if (this.#scratch.byteLength < length) {
      releaseBuffer(this.#scratch);
      this.#scratch = new ArrayBuffer(length);
      this.scratchBytes = length;
    }
    const into = new Uint8Array(this.#scratch, 0, length);
    const endRead = this.#timer?.begin('storageRead');
    try {
      let at = 0;
      while (at < length) {
        const n = reader.read(into.subarray(at), begin + at);
        if (n <= 0) throw new Error(`this kept part ended at ${begin + at} of ${this.#size} bytes`);
        at += n;
      }
    } finally {
      endRead?.();
    }
    this.bytesRead += length;
    this.#timer?.readAsAsked(length);
    return into;
  }

  /** Releases the file's handle and the scratch buffer; a read after it throws. */
  close(): void {
    const reader = this.#reader;
    this.#reader = null;
    releaseBuffer(this.#scratch);
    this.#scratch = new ArrayBuffer(0);
    try {
      reader?.close();
    } catch {
      // Closed already (the worker going away): nothing held.
    }
  }
}

/** Closes `bytes` where it is a part on disk; true where it was. */
export function closePart(bytes: unknown): boolean {
  if (!(bytes instanceof PartOnDisk)) return false;
  bytes.close();
  return true;
}
