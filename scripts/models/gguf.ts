/**
 * A minimal GGUF v3 writer (the file format of llama.cpp / ggml), enough for f32/f16 and Q4_0/Q8_0
 * tensors and every metadata value type; gguf-read.ts reads such files back.
 *
 * Layout (little endian):
 *   "GGUF" u32 version=3  u64 tensor_count  u64 kv_count
 *   kv_count × { string key, u32 value_type, value }
 *   tensor_count × { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
 *   padding to `general.alignment` (default 32)
 *   tensor data, each tensor at `offset` (relative to the data start, a multiple of the alignment)
 *
 * Strings are u64 byte length + UTF-8 bytes (no terminator). Arrays are u32 element type + u64 count
 * + elements. `ne[0]` is the fastest-varying dimension: a row-major [rows, cols] matrix has
 * ne = [cols, rows].
 *
 * The writer streams tensor data to the file (one tensor in memory at a time) and hashes every byte
 * it writes, so the caller gets size and sha256 without reading the file back.
 */
import type { Hash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_VERSION = 3;
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** gguf_type */
export const GgufType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufType = (typeof GgufType)[keyof typeof GgufType];
type GgufItemType = Exclude<GgufType, typeof GgufType.ARRAY>;

/** ggml_type: the plain float types, and the block-quantized Q4_0 and Q8_0 (gguf-quant.ts). */
export const GgmlType = { F32: 0, F16: 1, Q4_0: 2, Q8_0: 8 } as const;
export type GgmlType = (typeof GgmlType)[keyof typeof GgmlType];

export type GgufScalar = number | bigint | boolean | string;
/** A typed metadata value. Arrays carry their element type. */
export type GgufValue =
  | { type: GgufItemType; value: GgufScalar }
  | { type: typeof GgufType.ARRAY; itemType: GgufItemType; value: readonly GgufScalar[] };

export const gguf = {
  u32: (value: number): GgufValue => ({ type: GgufType.UINT32, value }),
  i32: (value: number): GgufValue => ({ type: GgufType.INT32, value }),
  f32: (value: number): GgufValue => ({ type: GgufType.FLOAT32, value }),
  bool: (value: boolean): GgufValue => ({ type: GgufType.BOOL, value }),
  str: (value: string): GgufValue => ({ type: GgufType.STRING, value }),
  strs: (value: readonly string[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.STRING, value }),
  i32s: (value: readonly number[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.INT32, value }),
  f32s: (value: readonly number[]): GgufValue => ({ type: GgufType.ARRAY, itemType: GgufType.FLOAT32, value }),
};

/** One tensor to write. `data()` is called once, when its bytes are due (keeps memory flat). */
export interface GgufTensorSpec {
  readonly name: string;
  /** ggml order: ne[0] fastest. */
  readonly ne: readonly number[];
  readonly type: GgmlType;
  /** Float32Array (F32), Uint16Array (F16 bits) or the blocks' bytes (Q4_0, Q8_0). */
  readonly data: () => Float32Array | Uint16Array | Uint8Array;
}

const SCALAR_BYTES: Partial<Record<GgufType, number>> = {
  [GgufType.UINT8]: 1,
  [GgufType.INT8]: 1,
  [GgufType.BOOL]: 1,
  [GgufType.UINT16]: 2,
  [GgufType.INT16]: 2,
  [GgufType.UINT32]: 4,
  [GgufType.INT32]: 4,
  [GgufType.FLOAT32]: 4,
  [GgufType.UINT64]: 8,
  [GgufType.INT64]: 8,
  [GgufType.FLOAT64]: 8,
};

/** Elements per block and bytes per block of each ggml type (ggml's type traits). */
const TYPE_BLOCKS: Record<GgmlType, { elements: number; bytes: number }> = {
  [GgmlType.F32]: { elements: 1, bytes: 4 },
  [GgmlType.F16]: { elements: 1, bytes: 2 },
  [GgmlType.Q4_0]: { elements: 32, bytes: 18 }, // f16 d + 16 bytes of nibbles
  [GgmlType.Q8_0]: { elements: 32, bytes: 34 }, // f16 d + 32 int8
};

/** Bytes of a tensor of `elements` elements of `type`; quantized rows must be whole blocks. */
export function ggmlTensorBytes(type: GgmlType, ne: readonly number[], name = 'tensor'): number {
  const block = TYPE_BLOCKS[type];
  if (!block) throw new Error(`gguf ${name}: unsupported ggml type ${type}`);
  if ((ne[0] ?? 1) % block.elements !== 0) throw new Error(`gguf ${name}: ne[0] = ${ne[0]} is not a multiple of the block size ${block.elements}`);
  return (ne.reduce((a, b) => a * b, 1) / block.elements) * block.bytes;
}

/** Growable little-endian byte buffer for the header. */
class ByteWriter {
  #buf = Buffer.alloc(1 << 16);
  #len = 0;

  get length(): number {
    return this.#len;
  }

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < this.#len + n) size *= 2;
    const next = Buffer.alloc(size);
    this.#buf.copy(next, 0, 0, this.#len);
    this.#buf = next;
  }

  u8(v: number): void {
    this.#room(1);
    this.#buf.writeUInt8(v, this.#len);
    this.#len += 1;
  }
  i8(v: number): void {
    this.#room(1);
    this.#buf.writeInt8(v, this.#len);
    this.#len += 1;
  }
  u16(v: number): void {
    this.#room(2);
    this.#buf.writeUInt16LE(v, this.#len);
    this.#len += 2;
  }
  i16(v: number): void {
    this.#room(2);
    this.#buf.writeInt16LE(v, this.#len);
    this.#len += 2;
  }
  u32(v: number): void {
    this.#room(4);
    this.#buf.writeUInt32LE(v, this.#len);
    this.#len += 4;
  }
  i32(v: number): void {
    this.#room(4);
    this.#buf.writeInt32LE(v, this.#len);
    this.#len += 4;
  }
  f32(v: number): void {
    this.#room(4);
    this.#buf.writeFloatLE(v, this.#len);
    this.#len += 4;
  }
  f64(v: number): void {
    this.#room(8);
    this.#buf.writeDoubleLE(v, this.#len);
    this.#len += 8;
  }
  u64(v: number | bigint): void {
    this.#room(8);
    this.#buf.writeBigUInt64LE(BigInt(v), this.#len);
    this.#len += 8;
  }
  i64(v: number | bigint): void {
    this.#room(8);
    this.#buf.writeBigInt64LE(BigInt(v), this.#len);
    this.#len += 8;
  }
  str(s: string): void {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.#room(bytes.length);
    bytes.copy(this.#buf, this.#len);
    this.#len += bytes.length;
  }
  pad(alignment: number): void {
    const n = (alignment - (this.#len % alignment)) % alignment;
    this.#room(n);
    this.#buf.fill(0, this.#len, this.#len + n);
    this.#len += n;
  }
  bytes(): Buffer {
    return this.#buf.subarray(0, this.#len);
  }
}

function writeScalar(w: ByteWriter, type: GgufType, v: GgufScalar, key: string): void {
  const num = (): number => {
    if (typeof v !== 'number') throw new Error(`gguf ${key}: expected a number, got ${typeof v}`);
    return v;
  };
  switch (type) {
    case GgufType.UINT8:
      return w.u8(num());
    case GgufType.INT8:
      return w.i8(num());
    case GgufType.UINT16:
      return w.u16(num());
    case GgufType.INT16:
      return w.i16(num());
    case GgufType.UINT32:
      return w.u32(num());
    case GgufType.INT32:
      return w.i32(num());
    case GgufType.FLOAT32:
      return w.f32(num());
    case GgufType.FLOAT64:
      return w.f64(num());
    case GgufType.BOOL:
      if (typeof v !== 'boolean') throw new Error(`gguf ${key}: expected a boolean`);
      return w.u8(v ? 1 : 0);
    case GgufType.UINT64:
      return w.u64(typeof v === 'bigint' ? v : num());
    case GgufType.INT64:
      return w.i64(typeof v === 'bigint' ? v : num());
    case GgufType.STRING:
      if (typeof v !== 'string') throw new Error(`gguf ${key}: expected a string`);
      return w.str(v);
    default:
      throw new Error(`gguf ${key}: unsupported type ${type}`);
  }
}

export interface GgufWriteResult {
  readonly bytes: number;
  readonly tensorDataOffset: number;
}

/**
 * Writes a GGUF v3 file. Metadata keys are written in the given order (ordered, so output is
 * deterministic); tensors in the given order, each aligned. Every byte written also goes to `hash`.
 */
export function writeGguf(
  path: string,
  metadata: ReadonlyArray<readonly [string, GgufValue]>,
  tensors: readonly GgufTensorSpec[],
  hash?: Hash,
): GgufWriteResult {
  const alignmentEntry = metadata.find(([k]) => k === 'general.alignment');
  const alignment = alignmentEntry ? Number(alignmentEntry[1].value) : GGUF_DEFAULT_ALIGNMENT;
  const seen = new Set<string>();
  for (const [k] of metadata) {
    if (seen.has(k)) throw new Error(`gguf: duplicate key ${k}`);
    seen.add(k);
  }

  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(GGUF_VERSION);
  w.u64(tensors.length);
  w.u64(metadata.length);
  for (const [key, v] of metadata) {
    w.str(key);
    w.u32(v.type);
    if (v.type === GgufType.ARRAY) {
      w.u32(v.itemType);
      w.u64(v.value.length);
      for (const item of v.value) writeScalar(w, v.itemType, item, key);
    } else {
      writeScalar(w, v.type, v.value, key);
    }
  }
  let offset = 0;
  const sizes: number[] = [];
  for (const t of tensors) {
    const size = ggmlTensorBytes(t.type, t.ne, t.name);
    w.str(t.name);
    w.u32(t.ne.length);
    for (const d of t.ne) w.u64(d);
    w.u32(t.type);
    w.u64(offset);
    sizes.push(size);
    offset += size + ((alignment - (size % alignment)) % alignment);
  }
  w.pad(alignment);
  const dataStart = w.length;

  const fd = openSync(path, 'w');
  let written = 0;
  const put = (buf: Uint8Array) => {
    let done = 0;
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
    hash?.update(buf);
    written += buf.length;
  };
  try {
    put(w.bytes());
    const zeros = new Uint8Array(alignment);
    tensors.forEach((t, i) => {
      const data = t.data();
      const expected = sizes[i] as number;
      if (data.byteLength !== expected) throw new Error(`gguf tensor ${t.name}: ${data.byteLength} bytes, expected ${expected}`);
      const wantType = t.type === GgmlType.F32 ? Float32Array : t.type === GgmlType.F16 ? Uint16Array : Uint8Array;
      if (!(data instanceof wantType)) throw new Error(`gguf tensor ${t.name}: data type does not match ggml type`);
      put(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      const padding = (alignment - (expected % alignment)) % alignment;
      if (padding) put(zeros.subarray(0, padding));
    });
  } finally {
    closeSync(fd);
  }
  return { bytes: written, tensorDataOffset: dataStart };
}
