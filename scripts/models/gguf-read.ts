/**
 * Reads a GGUF file (v2 or v3; the layout is in gguf.ts) for the tests and self-checks: parses the
 * header and metadata, reads a tensor's bytes on demand.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { float16Value } from './float16.ts';
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GgmlType, type GgufScalar, GgufType, ggmlTensorBytes } from './gguf.ts';

export interface GgufTensorInfo {
  readonly name: string;
  readonly ne: readonly number[];
  readonly type: number;
  /** Absolute byte offset in the file. */
  readonly offset: number;
  readonly bytes: number;
}

export interface GgufFile {
  readonly version: number;
  readonly metadata: ReadonlyMap<string, { type: GgufType; itemType?: GgufType; value: GgufScalar | GgufScalar[] }>;
  readonly tensors: readonly GgufTensorInfo[];
  readonly alignment: number;
  readonly dataOffset: number;
  /** Reads one f32 tensor's data (f16 converted to f32; quantized types: see readTensorBytes). */
  readTensor(name: string): Float32Array;
  /** Reads one tensor's raw bytes (any type; Q4_0 / Q8_0 blocks are decoded by gguf-quant.ts). */
  readTensorBytes(name: string): Uint8Array;
  close(): void;
}

/** Reads the header of a GGUF file (v2 or v3). */
export function readGguf(path: string): GgufFile {
  const fd = openSync(path, 'r');
  let pos = 0;
  let chunk = Buffer.alloc(0);
  let chunkStart = 0;
  const need = (n: number): Buffer => {
    if (pos < chunkStart || pos + n > chunkStart + chunk.length) {
      const size = Math.max(n, 1 << 20);
      chunk = Buffer.alloc(size);
      const got = readSync(fd, chunk, 0, size, pos);
      chunk = chunk.subarray(0, got);
      chunkStart = pos;
      if (got < n) throw new Error(`gguf: unexpected end of file at ${pos}`);
    }
    const out = chunk.subarray(pos - chunkStart, pos - chunkStart + n);
    pos += n;
    return out;
  };
  const u32 = () => need(4).readUInt32LE(0);
  const u64 = () => Number(need(8).readBigUInt64LE(0));
  const str = () => need(u64()).toString('utf8');
  const scalar = (type: GgufType): GgufScalar => {
    switch (type) {
      case GgufType.UINT8:
        return need(1).readUInt8(0);
      case GgufType.INT8:
        return need(1).readInt8(0);
      case GgufType.UINT16:
        return need(2).readUInt16LE(0);
      case GgufType.INT16:
        return need(2).readInt16LE(0);
      case GgufType.UINT32:
        return u32();
      case GgufType.INT32:
        return need(4).readInt32LE(0);
      case GgufType.FLOAT32:
        return need(4).readFloatLE(0);
      case GgufType.FLOAT64:
        return need(8).readDoubleLE(0);
      case GgufType.BOOL:
        return need(1).readUInt8(0) !== 0;
      case GgufType.UINT64:
        return need(8).readBigUInt64LE(0);
      case GgufType.INT64:
        return need(8).readBigInt64LE(0);
      case GgufType.STRING:
        return str();
      default:
        throw new Error(`gguf: unknown value type ${type}`);
    }
  };
  try {
    if (u32() !== GGUF_MAGIC) throw new Error(`${path} is not a GGUF file`);
    const version = u32();
    if (version < 2 || version > 3) throw new Error(`gguf: unsupported version ${version}`);
    const nTensors = u64();
    const nKv = u64();
    const metadata = new Map<string, { type: GgufType; itemType?: GgufType; value: GgufScalar | GgufScalar[] }>();
    for (let i = 0; i < nKv; i++) {
      const key = str();
      const type = u32() as GgufType;
      if (type === GgufType.ARRAY) {
        const itemType = u32() as GgufType;
        const n = u64();
        const items: GgufScalar[] = new Array(n);
        for (let j = 0; j < n; j++) items[j] = scalar(itemType);
        metadata.set(key, { type, itemType, value: items });
      } else {
        metadata.set(key, { type, value: scalar(type) });
      }
    }
    const raw: { name: string; ne: number[]; type: number; rel: number }[] = [];
    for (let i = 0; i < nTensors; i++) {
      const name = str();
      const nDims = u32();
      const ne: number[] = [];
      for (let d = 0; d < nDims; d++) ne.push(u64());
      const type = u32();
      const rel = u64();
      raw.push({ name, ne, type, rel });
    }
    const alignment = Number(metadata.get('general.alignment')?.value ?? GGUF_DEFAULT_ALIGNMENT);
    const dataOffset = Math.ceil(pos / alignment) * alignment;
    const tensors: GgufTensorInfo[] = raw.map((t) => ({ name: t.name, ne: t.ne, type: t.type, offset: dataOffset + t.rel, bytes: ggmlTensorBytes(t.type as GgmlType, t.ne, t.name) }));
    const readBytes = (name: string): { info: GgufTensorInfo; buf: Buffer } => {
      const info = tensors.find((t) => t.name === name);
      if (!info) throw new Error(`gguf: no tensor ${name}`);
      const buf = Buffer.alloc(info.bytes);
      let done = 0;
      while (done < info.bytes) {
        const got = readSync(fd, buf, done, info.bytes - done, info.offset + done);
        if (got === 0) throw new Error(`gguf: tensor ${name} runs past the end of the file`);
        done += got;
      }
      return { info, buf };
    };
    return {
      version,
      metadata,
      tensors,
      alignment,
      dataOffset,
      readTensorBytes(name: string): Uint8Array {
        const { buf } = readBytes(name);
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      },
      readTensor(name: string): Float32Array {
        const { info, buf } = readBytes(name);
        if (info.type !== GgmlType.F32 && info.type !== GgmlType.F16) throw new Error(`gguf: tensor ${name} is block-quantized (type ${info.type}): read it with readTensorBytes`);
        if (info.type === GgmlType.F32) return new Float32Array(buf.buffer, buf.byteOffset, info.bytes / 4).slice();
        const half = new Uint16Array(buf.buffer, buf.byteOffset, info.bytes / 2);
        return Float32Array.from(half, float16Value);
      },
      close: () => closeSync(fd),
    };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}
