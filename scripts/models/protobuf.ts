/**
 * A minimal protobuf wire-format writer that never copies large byte fields.
 *
 * Messages are built as a list of chunks: small scalar fields go into a growable scratch buffer,
 * large `bytes` fields (tensor raw_data of hundreds of MB) are kept by reference, and nested
 * messages splice their chunks into the parent. Only lengths are computed, so a 540 MB ONNX
 * model is streamed to disk with no second copy in memory.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Hash } from 'node:crypto';

/** Protobuf wire types (plain constants rather than an enum, so type-stripping runners work). */
const WireType = { Varint: 0, LengthDelimited: 2, Fixed32: 5 } as const;
type WireType = (typeof WireType)[keyof typeof WireType];

/** Byte fields larger than this are referenced instead of copied. */
const COPY_LIMIT = 1 << 16;

const utf8 = new TextEncoder();

export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private scratch = new Uint8Array(256);
  private pos = 0;
  private total = 0;

  /** Total encoded length in bytes. */
  get length(): number {
    return this.total + this.pos;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.scratch.length) return;
    let size = this.scratch.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.scratch.subarray(0, this.pos));
    this.scratch = next;
  }

  private flushScratch(): void {
    if (this.pos === 0) return;
    this.chunks.push(this.scratch.slice(0, this.pos));
    this.total += this.pos;
    this.pos = 0;
  }

  private rawVarint(value: number | bigint): void {
    let v: bigint;
    if (typeof value === 'number') {
      if (!Number.isInteger(value)) throw new TypeError(`varint must be an integer, got ${value}`);
      if (value >= 0 && value < 0x80000000) {
        // fast path
        this.ensure(5);
        let x = value;
        while (x >= 0x80) {
          this.scratch[this.pos++] = (x & 0x7f) | 0x80;
          x >>>= 7;
        }
        this.scratch[this.pos++] = x;
        return;
      }
      v = BigInt(value);
    } else {
      v = value;
    }
    // Negative int64 values are encoded as their 64-bit two's complement (10 bytes).
    v = BigInt.asUintN(64, v);
    this.ensure(10);
    while (v >= 0x80n) {
      this.scratch[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.scratch[this.pos++] = Number(v);
  }

  private tag(field: number, wire: WireType): void {
    this.rawVarint((field << 3) | wire);
  }

  private rawBytes(data: Uint8Array): void {
    if (data.length > COPY_LIMIT) {
      this.flushScratch();
      this.chunks.push(data);
      this.total += data.length;
    } else {
      this.ensure(data.length);
      this.scratch.set(data, this.pos);
      this.pos += data.length;
    }
  }

  /** int32/int64/uint64/enum/bool field (negative numbers as 64-bit two's complement). */
  int(field: number, value: number | bigint): this {
    this.tag(field, WireType.Varint);
    this.rawVarint(value);
    return this;
  }

  /** float field (fixed32). */
  float(field: number, value: number): this {
    this.tag(field, WireType.Fixed32);
    this.ensure(4);
    new DataView(this.scratch.buffer, this.scratch.byteOffset).setFloat32(this.pos, value, true);
    this.pos += 4;
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, utf8.encode(value));
  }

  /** bytes field; large buffers are referenced, not copied — do not mutate them before writing. */
  bytes(field: number, data: Uint8Array): this {
    this.tag(field, WireType.LengthDelimited);
    this.rawVarint(data.length);
    this.rawBytes(data);
    return this;
  }

  /** packed repeated int64 field. */
  packedInts(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.rawVarint(v);
    this.tag(field, WireType.LengthDelimited);
    this.rawVarint(inner.length);
    this.splice(inner);
    return this;
  }

  /** packed repeated float field. */
  packedFloats(field: number, values: readonly number[]): this {
    const data = new Uint8Array(values.length * 4);
    const view = new DataView(data.buffer);
    values.forEach((v, i) => view.setFloat32(i * 4, v, true));
    return this.bytes(field, data);
  }

  /** embedded message field. */
  message(field: number, sub: ProtoWriter): this {
    this.tag(field, WireType.LengthDelimited);
    this.rawVarint(sub.length);
    this.splice(sub);
    return this;
  }

  private splice(sub: ProtoWriter): void {
    sub.flushScratch();
    for (const c of sub.chunks) this.rawBytes(c);
  }

  /** The encoded message as chunks (concatenate them to get the bytes). */
  finish(): Uint8Array[] {
    this.flushScratch();
    return this.chunks.slice();
  }

  /** The encoded message as one buffer (only for small messages). */
  toBytes(): Uint8Array {
    const out = new Uint8Array(this.length);
    let off = 0;
    for (const c of this.finish()) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }

  /** Streams the message to `path`, feeding each chunk to `hash` if given. Returns bytes written. */
  writeToFile(path: string, hash?: Hash): number {
    const fd = openSync(path, 'w');
    let written = 0;
    try {
      for (const chunk of this.finish()) {
        // writeSync may write less than asked for very large buffers
        let off = 0;
        while (off < chunk.length) {
          off += writeSync(fd, chunk, off, Math.min(chunk.length - off, 1 << 28));
        }
        hash?.update(chunk);
        written += chunk.length;
      }
    } finally {
      closeSync(fd);
    }
    return written;
  }
}
