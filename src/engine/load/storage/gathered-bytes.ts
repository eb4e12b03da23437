/**
 * A kept part given as pieces of other buffers rather than as one buffer: `byteLength` bytes, each
 * piece's bytes at its offset, zeros between them. A kept rewrite's copy of what its graph reads of
 * the model's own file (rewritten-graphs.ts, `KEPT_WEIGHTS`) is one: at fp32 that is 409 MiB of a
 * 517 MiB file, and gathered into one buffer while the session is created it would raise the
 * load's peak by as much. A store that can write a file piece by piece (opfs-kept-files.ts) writes
 * it so; another asks for `whole()`.
 */
import { sampleOf } from './checked-records.ts';

export interface GatheredPiece {
  /** Where the piece starts in the part. */
  at: number;
  bytes: Uint8Array;
}

export class GatheredBytes {
  /** `pieces` in order of `at`, none overlapping another or past `byteLength`. */
  constructor(
    readonly byteLength: number,
    readonly pieces: readonly GatheredPiece[],
  ) {
    let end = 0;
    for (const p of pieces) {
      if (p.at < end || p.at + p.bytes.byteLength > byteLength) throw new RangeError(`a gathered piece at ${p.at} (${p.bytes.byteLength} bytes) overlaps another or ends past ${byteLength}`);
      end = p.at + p.bytes.byteLength;
    }
  }

  /** The bytes from `start` to `end`, copied into a buffer of their own. */
  slice(start: number, end: number): Uint8Array<ArrayBuffer> {
    const out = new Uint8Array(end - start);
    for (const p of this.pieces) {
      const from = Math.max(start, p.at);
      const to = Math.min(end, p.at + p.bytes.byteLength);
      if (from < to) out.set(p.bytes.subarray(from - p.at, to - p.at), from - start);
    }
    return out;
  }

  /** All of it in one buffer (a copy of `byteLength` bytes). */
  whole(): Uint8Array<ArrayBuffer> {
    return this.slice(0, this.byteLength);
  }

  /** The bytes of its sampled blocks, as checked-records.ts `sampleBytes` gives them of the whole. */
  sample(): Uint8Array<ArrayBuffer> {
    return sampleOf(this.byteLength, (s, e) => this.slice(s, e));
  }
}

/** What a kept store is given to write: one buffer, or pieces (gathered). */
export type KeptBytes = Uint8Array<ArrayBuffer> | GatheredBytes;
