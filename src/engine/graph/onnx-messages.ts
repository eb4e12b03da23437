/**
 * The ONNX messages the load-time graph rewrites read and write (logits-to-keep.ts,
 * int8-projections.ts), over the wire format of onnx-wire.ts: a node's inputs, outputs, operator
 * and integer attributes; new nodes, attributes and small initializers.
 *
 * Field numbers from onnx.proto: NodeProto input 1, output 2, name 3, op_type 4, attribute 5,
 * domain 7; AttributeProto name 1, i 3, t 5, ints 8, type 20 (INT 2, INTS 7); TensorProto dims 1,
 * data_type 2, name 8, raw_data 9, external_data 13, data_location 14; ValueInfoProto name 1, type 2
 * (TypeProto.tensor_type 1 → elem_type 1, shape 2).
 */
import { fields, Pieces, readSignedVarint, readVarint, utf8, WIRE_BYTES, WIRE_VARINT, type Field } from './onnx-wire.ts';

export const MODEL_GRAPH = 7;
export const MODEL_OPSET_IMPORT = 8;
export const GRAPH_NODE = 1;
export const GRAPH_INITIALIZER = 5;
export const GRAPH_INPUT = 11;
export const GRAPH_OUTPUT = 12;
export const NODE_INPUT = 1;
const NODE_OUTPUT = 2;
const NODE_NAME = 3;
const NODE_OP_TYPE = 4;
export const NODE_ATTRIBUTE = 5;
const NODE_DOMAIN = 7;
export const ATTRIBUTE_NAME = 1;
const ATTRIBUTE_INT = 3;
const ATTRIBUTE_INTS = 8;
const ATTRIBUTE_TENSOR = 5;
const ATTRIBUTE_TYPE = 20;

/** TensorProto.DataType values. */
export const TensorType = { FLOAT: 1, UINT8: 2, INT8: 3, INT32: 6, INT64: 7, BOOL: 9, FLOAT16: 10 } as const;

export interface NodeInfo {
  field: Field;
  inputs: string[];
  outputs: string[];
  op: string;
  domain: string;
  /** The node's INT attributes, and its INTS attributes (signed). */
  ints: Map<string, number>;
  lists: Map<string, number[]>;
  /** Its TENSOR attributes (`Constant`'s value), as fields to read with onnx-graph.ts `parseTensor`. */
  tensors: Map<string, Field>;
  /** The names of all its attributes, of whatever type. */
  attributes: Set<string>;
}

const utf8Decoder = new TextDecoder();
export const text = (buf: Uint8Array, f: Field) => utf8Decoder.decode(buf.subarray(f.payloadStart, f.end));

/** A varint field's value. */
export function varintValue(buf: Uint8Array, f: Field): number {
  return readVarint(buf, f.payloadStart)[0];
}

export function parseNode(buf: Uint8Array, field: Field): NodeInfo {
  const node: NodeInfo = { field, inputs: [], outputs: [], op: '', domain: '', ints: new Map(), lists: new Map(), tensors: new Map(), attributes: new Set() };
  for (const f of fields(buf, field.payloadStart, field.end)) {
    if (f.number === NODE_INPUT) node.inputs.push(text(buf, f));
    else if (f.number === NODE_OUTPUT) node.outputs.push(text(buf, f));
    else if (f.number === NODE_OP_TYPE) node.op = text(buf, f);
    else if (f.number === NODE_DOMAIN) node.domain = text(buf, f);
    else if (f.number === NODE_ATTRIBUTE && f.wire === WIRE_BYTES) {
      let name = '';
      let value: number | null = null;
      let tensor: Field | null = null;
      const list: number[] = [];
      for (const a of fields(buf, f.payloadStart, f.end)) {
        if (a.number === ATTRIBUTE_NAME) name = text(buf, a);
        else if (a.number === ATTRIBUTE_INT && a.wire === WIRE_VARINT) value = readSignedVarint(buf, a.payloadStart)[0];
        else if (a.number === ATTRIBUTE_TENSOR && a.wire === WIRE_BYTES) tensor = a;
        else if (a.number === ATTRIBUTE_INTS && a.wire === WIRE_VARINT) list.push(readSignedVarint(buf, a.payloadStart)[0]);
        else if (a.number === ATTRIBUTE_INTS && a.wire === WIRE_BYTES) {
          for (let pos = a.payloadStart; pos < a.end; ) {
            const [v, next] = readSignedVarint(buf, pos);
            list.push(v);
            pos = next;
          }
        }
      }
      node.attributes.add(name);
      if (value !== null) node.ints.set(name, value);
      if (list.length) node.lists.set(name, list);
      if (tensor) node.tensors.set(name, tensor);
    }
  }
  return node;
}

/** The model's main graph field (ModelProto.graph), or null. */
export function graphFieldOf(model: Uint8Array): Field | null {
  return [...fields(model, 0, model.length)].find((f) => f.number === MODEL_GRAPH && f.wire === WIRE_BYTES) ?? null;
}

/** `model` with its graph field `graphField` replaced by `graph`; every other field as it was. */
export function withGraph(model: Uint8Array, graphField: Field, graph: Pieces): Uint8Array {
  const out = new Pieces();
  for (const f of fields(model, 0, model.length)) {
    if (f.start === graphField.start) out.bytesField(MODEL_GRAPH, graph);
    else out.push(model.subarray(f.start, f.end));
  }
  return out.concat();
}

export function stringField(out: Pieces, number: number, value: string): void {
  out.bytesField(number, utf8.encode(value));
}

export function varintField(out: Pieces, number: number, value: number): void {
  out.varint(number * 8 + WIRE_VARINT);
  out.varint(value);
}

export const VALUE_NAME = 1;
export const VALUE_TYPE = 2;

/** ValueInfoProto of a graph input or output (or a `value_info` entry): a tensor of `type` (TensorType), a scalar, of a shape left unknown, or of these dimensions (a size or a symbol's name). */
export function tensorValue(name: string, type: number, shape: 'scalar' | 'unknown' | readonly (number | string)[]): Pieces {
  const tensor = new Pieces();
  varintField(tensor, 1, type);
  if (shape !== 'unknown') {
    const dims = new Pieces(); // TensorShapeProto (no dims: a scalar)
    for (const d of shape === 'scalar' ? [] : shape) {
      const dim = new Pieces();
      if (typeof d === 'number') varintField(dim, 1, d);
      else stringField(dim, 2, d);
      dims.bytesField(1, dim);
    }
    tensor.bytesField(2, dims);
  }
  const typeProto = new Pieces();
  typeProto.bytesField(1, tensor);
  const value = new Pieces();
  stringField(value, VALUE_NAME, name);
  value.bytesField(VALUE_TYPE, typeProto);
  return value;
}

/** A NodeProto of the default domain (or `domain`) whose single output names the node. */
export function node(op: string, inputs: string[], output: string, attributes: Pieces[] = [], domain = ''): Pieces {
  const n = new Pieces();
  for (const i of inputs) stringField(n, NODE_INPUT, i);
  stringField(n, NODE_OUTPUT, output);
  stringField(n, NODE_NAME, output);
  stringField(n, NODE_OP_TYPE, op);
  for (const a of attributes) n.bytesField(NODE_ATTRIBUTE, a);
  if (domain) stringField(n, NODE_DOMAIN, domain);
  return n;
}

/** AttributeProto { name, i, type: INT }. */
export function intAttribute(name: string, value: number): Pieces {
  const a = new Pieces();
  stringField(a, ATTRIBUTE_NAME, name);
  varintField(a, ATTRIBUTE_INT, value);
  varintField(a, ATTRIBUTE_TYPE, 2);
  return a;
}

/** AttributeProto { name, ints, type: INTS }; negative values as protobuf int64 (ten-byte two's complement). */
export function intsAttribute(name: string, values: number[]): Pieces {
  const a = new Pieces();
  stringField(a, ATTRIBUTE_NAME, name);
  for (const v of values) {
    a.varint(ATTRIBUTE_INTS * 8 + WIRE_VARINT);
    a.push(int64Varint(v));
  }
  varintField(a, ATTRIBUTE_TYPE, 7);
  return a;
}

function int64Varint(value: number): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(value));
  const bytes: number[] = [];
  while (v >= 0x80n) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return Uint8Array.from(bytes);
}

/** An initializer of `type` and `dims` with its bytes inline (`raw_data`, little-endian). */
export function rawTensor(name: string, type: number, dims: number[], raw: Uint8Array): Pieces {
  const t = tensorHeader(name, type, dims);
  t.bytesField(9, raw);
  return t;
}

/** A one-dimensional int64 initializer. */
export function int64Tensor(name: string, values: bigint[]): Pieces {
  return rawTensor(name, TensorType.INT64, [values.length], new Uint8Array(BigInt64Array.from(values).buffer));
}

/** An initializer whose bytes are `length` bytes at `offset` of the external file `location`. */
export function externalTensor(name: string, type: number, dims: number[], location: string, offset: number, length: number): Pieces {
  const t = tensorHeader(name, type, dims);
  externalDataFields(t, location, offset, length);
  return t;
}

/** A TensorProto's external_data entries (location, offset, length) and data_location EXTERNAL. */
export function externalDataFields(tensor: Pieces, location: string, offset: number, length: number): void {
  for (const [key, value] of [
    ['location', location],
    ['offset', String(offset)],
    ['length', String(length)],
  ] as const) {
    const e = new Pieces();
    stringField(e, 1, key);
    stringField(e, 2, value);
    tensor.bytesField(13, e);
  }
  varintField(tensor, 14, 1); // data_location: EXTERNAL
}

function tensorHeader(name: string, type: number, dims: number[]): Pieces {
  const t = new Pieces();
  for (const d of dims) varintField(t, 1, d);
  varintField(t, 2, type);
  stringField(t, 8, name);
  return t;
}
