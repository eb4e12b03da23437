/**
 * A small ONNX graph builder: nodes, initializers (raw little-endian data, never copied),
 * typed inputs/outputs with symbolic dims, serialized to an ONNX ModelProto with ProtoWriter.
 *
 * Field numbers follow onnx/onnx.proto (IR version 8).
 */
import { endianness } from 'node:os';
import { toFloat16Bits } from './float16.ts';
import { ProtoWriter } from './protobuf.ts';

/** TensorProto.DataType values used here. */
export const DataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
  FLOAT16: 10,
} as const;
export type DataType = (typeof DataType)[keyof typeof DataType];

/** AttributeProto.AttributeType values used here. */
const AttrType = { FLOAT: 1, INT: 2, STRING: 3, INTS: 7 } as const;

/** An attribute value: number → INT (if integral and not forced float), {float} → FLOAT, number[] → INTS. */
export type AttrValue = number | { float: number } | readonly number[] | string;

export interface NodeSpec {
  readonly opType: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly name: string;
  readonly attrs: Readonly<Record<string, AttrValue>>;
  /** Operator domain ('' = ai.onnx; 'com.microsoft' for contrib ops such as MatMulNBits). */
  readonly domain?: string;
}

export interface InitializerSpec {
  readonly name: string;
  readonly dataType: DataType;
  readonly dims: readonly number[];
  /** Raw little-endian bytes; may be a view of a large typed array (kept by reference). */
  readonly raw: Uint8Array;
  /** Set by `externalize`: the bytes live in `location` at `offset` instead of raw_data. */
  external?: { readonly location: string; readonly offset: number };
}

/** Bytes per element of the data types used here. */
export function elementBytes(t: DataType): number {
  return t === DataType.INT64 ? 8 : t === DataType.FLOAT || t === DataType.INT32 ? 4 : t === DataType.FLOAT16 ? 2 : 1;
}

/** A dimension: a number, or a symbolic name (dim_param). */
export type Dim = number | string;

export interface ValueInfoSpec {
  readonly name: string;
  readonly elemType: DataType;
  readonly shape: readonly Dim[];
}

if (endianness() !== 'LE') {
  // raw_data is little-endian by the ONNX spec; typed arrays use the platform's byte order.
  throw new Error('the ONNX writer assumes a little-endian platform');
}

/** Little-endian bytes of a typed array, without copying. */
export function bytesOf(a: Float32Array | Int8Array | BigInt64Array | Uint8Array | Uint16Array | Int32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

export class GraphBuilder {
  readonly nodes: NodeSpec[] = [];
  readonly initializers: InitializerSpec[] = [];
  readonly inputs: ValueInfoSpec[] = [];
  readonly outputs: ValueInfoSpec[] = [];
  private readonly names = new Set<string>();
  private readonly constCache = new Map<string, string>();
  private counter = 0;

  readonly graphName: string;

  constructor(graphName: string) {
    this.graphName = graphName;
  }

  private claim(name: string): string {
    if (this.names.has(name)) throw new Error(`duplicate value name ${name}`);
    this.names.add(name);
    return name;
  }

  /** A fresh value name derived from `hint`. */
  fresh(hint: string): string {
    let name = hint;
    while (this.names.has(name)) name = `${hint}_${++this.counter}`;
    return name;
  }

  input(name: string, elemType: DataType, shape: readonly Dim[]): string {
    this.inputs.push({ name: this.claim(name), elemType, shape });
    return name;
  }

  /** Declares an existing value as a graph output. */
  output(name: string, elemType: DataType, shape: readonly Dim[]): void {
    if (!this.names.has(name)) throw new Error(`output ${name} is not produced by the graph`);
    this.outputs.push({ name, elemType, shape });
  }

  initializer(name: string, dataType: DataType, dims: readonly number[], raw: Uint8Array): string {
    const expected = dims.reduce((a, b) => a * b, 1) * elementBytes(dataType);
    if (raw.byteLength !== expected) {
      throw new Error(`initializer ${name}: ${raw.byteLength} bytes for dims [${dims.join(',')}]`);
    }
    this.initializers.push({ name: this.claim(name), dataType, dims, raw });
    return name;
  }

  floatInit(name: string, dims: readonly number[], data: Float32Array): string {
    return this.initializer(name, DataType.FLOAT, dims, bytesOf(data));
  }

  /** A small int64 constant (deduplicated). `dims` defaults to [values.length]; pass [] for a scalar. */
  constInt64(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const key = `i64:${dims.join('x')}:${values.join(',')}`;
    const hit = this.constCache.get(key);
    if (hit) return hit;
    const name = this.fresh(`const_i64_${values.join('_').replace(/-/g, 'm')}${dims.length === 0 ? '_scalar' : ''}`);
    this.initializer(name, DataType.INT64, dims, bytesOf(BigInt64Array.from(values.map((v) => BigInt(v)))));
    this.constCache.set(key, name);
    return name;
  }

  /** A small float32 constant (deduplicated). */
  constFloat(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const key = `f32:${dims.join('x')}:${values.join(',')}`;
    const hit = this.constCache.get(key);
    if (hit) return hit;
    const name = this.fresh(`const_f32_${this.constCache.size}`);
    this.initializer(name, DataType.FLOAT, dims, bytesOf(Float32Array.from(values)));
    this.constCache.set(key, name);
    return name;
  }

  /** A small float16 constant (deduplicated); values are rounded to float16. */
  constFloat16(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const key = `f16:${dims.join('x')}:${values.join(',')}`;
    const hit = this.constCache.get(key);
    if (hit) return hit;
    const name = this.fresh(`const_f16_${this.constCache.size}`);
    this.initializer(name, DataType.FLOAT16, dims, bytesOf(toFloat16Bits(values)));
    this.constCache.set(key, name);
    return name;
  }

  /**
   * Moves every initializer of at least `minBytes` into the external data file `location` (a
   * name relative to the .onnx file, as ONNX's external-data format and transformers.js'
   * `<file>_data` expect), in order, each at an offset aligned to `align` bytes. Returns the
   * file's content as chunks (zero padding included), to be written beside the graph.
   */
  externalize(location: string, minBytes: number, align = 64): Uint8Array[] {
    const chunks: Uint8Array[] = [];
    let offset = 0;
    for (const t of this.initializers) {
      if (t.raw.byteLength < minBytes) continue;
      const pad = (align - (offset % align)) % align;
      if (pad) chunks.push(new Uint8Array(pad));
      offset += pad;
      t.external = { location, offset };
      chunks.push(t.raw);
      offset += t.raw.byteLength;
    }
    return chunks;
  }

  /**
   * Adds a node and returns its output names. `outputs` may be given explicitly (e.g. graph
   * outputs such as `present.0.key`); otherwise `count` names are derived from `name`.
   */
  node(
    opType: string,
    inputs: readonly string[],
    opts: { name: string; attrs?: Record<string, AttrValue>; outputs?: readonly string[]; count?: number; domain?: string },
  ): string[] {
    for (const i of inputs) {
      if (i !== '' && !this.names.has(i)) throw new Error(`${opts.name}: unknown input ${i}`);
    }
    const outputs = opts.outputs
      ? opts.outputs.map((o) => (o === '' ? o : this.claim(o))) // '' = an optional output left out
      : Array.from({ length: opts.count ?? 1 }, (_, k) => this.claim(this.fresh(`${opts.name}/output_${k}`)));
    this.nodes.push({ opType, inputs, outputs, name: opts.name, attrs: opts.attrs ?? {}, ...(opts.domain ? { domain: opts.domain } : {}) });
    return outputs;
  }

  /** Convenience for single-output nodes. */
  op(opType: string, inputs: readonly string[], name: string, attrs?: Record<string, AttrValue>, output?: string): string {
    const outs = this.node(opType, inputs, { name, ...(attrs ? { attrs } : {}), ...(output ? { outputs: [output] } : {}) });
    return outs[0] as string;
  }

  /** Serializes to a ModelProto (initializer data referenced, not copied). */
  toModelProto(meta: {
    irVersion: number;
    opset: number;
    producerName: string;
    producerVersion: string;
    docString?: string;
    /** Further operator sets, e.g. [{ domain: 'com.microsoft', version: 1 }]. */
    extraOpsets?: readonly { domain: string; version: number }[];
  }): ProtoWriter {
    const graph = new ProtoWriter();
    for (const n of this.nodes) graph.message(1, encodeNode(n));
    graph.string(2, this.graphName);
    for (const t of this.initializers) graph.message(5, encodeTensor(t));
    for (const v of this.inputs) graph.message(11, encodeValueInfo(v));
    for (const v of this.outputs) graph.message(12, encodeValueInfo(v));

    const model = new ProtoWriter();
    model.int(1, meta.irVersion);
    model.string(2, meta.producerName);
    model.string(3, meta.producerVersion);
    if (meta.docString) model.string(6, meta.docString);
    model.message(7, graph);
    model.message(8, new ProtoWriter().string(1, '').int(2, meta.opset));
    for (const o of meta.extraOpsets ?? []) model.message(8, new ProtoWriter().string(1, o.domain).int(2, o.version));
    return model;
  }
}

function encodeNode(n: NodeSpec): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name);
  w.string(4, n.opType);
  if (n.domain) w.string(7, n.domain);
  for (const [name, value] of Object.entries(n.attrs)) w.message(5, encodeAttr(name, value));
  return w;
}

function encodeAttr(name: string, value: AttrValue): ProtoWriter {
  const w = new ProtoWriter().string(1, name);
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error(`attribute ${name}: use {float: x} for floats`);
    w.int(3, value).int(20, AttrType.INT);
  } else if (typeof value === 'string') {
    w.string(4, value).int(20, AttrType.STRING);
  } else if (Array.isArray(value)) {
    w.packedInts(8, value as readonly number[]).int(20, AttrType.INTS);
  } else {
    w.float(2, (value as { float: number }).float).int(20, AttrType.FLOAT);
  }
  return w;
}

function encodeTensor(t: InitializerSpec): ProtoWriter {
  const w = new ProtoWriter();
  if (t.dims.length > 0) w.packedInts(1, t.dims);
  w.int(2, t.dataType);
  w.string(8, t.name);
  if (t.external) {
    // TensorProto.external_data (13: StringStringEntryProto {key 1, value 2}), data_location (14) = EXTERNAL
    const entry = (k: string, v: string) => new ProtoWriter().string(1, k).string(2, v);
    w.message(13, entry('location', t.external.location));
    w.message(13, entry('offset', String(t.external.offset)));
    w.message(13, entry('length', String(t.raw.byteLength)));
    w.int(14, 1);
  } else {
    w.bytes(9, t.raw);
  }
  return w;
}

function encodeValueInfo(v: ValueInfoSpec): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of v.shape) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.int(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter().int(1, v.elemType).message(2, shape);
  const type = new ProtoWriter().message(1, tensorType);
  return new ProtoWriter().string(1, v.name).message(2, type);
}
