/**
 * An ONNX model's main graph as the load-time rewrites read it (logits-to-keep.ts,
 * int8-projections.ts): its fields in order, its nodes, how many nodes read each value, its inputs
 * and outputs, and its initializers (with their bytes, inline or in mounted external data). Read
 * once, over the wire format (onnx-wire.ts) and messages (onnx-messages.ts); nothing is copied.
 *
 * Field numbers from onnx.proto: ModelProto opset_import 8 (OperatorSetIdProto: domain 1,
 * version 2); ValueInfoProto name 1, type 2 (TypeProto.tensor_type 1 → shape 2 → dim 1*);
 * TensorProto dims 1, data_type 2, name 8, raw_data 9, external_data 13 (StringStringEntryProto:
 * key 1, value 2).
 */
import {
  GRAPH_INITIALIZER,
  GRAPH_INPUT,
  GRAPH_NODE,
  GRAPH_OUTPUT,
  graphFieldOf,
  MODEL_OPSET_IMPORT,
  type NodeInfo,
  parseNode,
  text,
  VALUE_NAME,
  VALUE_TYPE,
  varintValue,
} from './onnx-messages.ts';
import { fields, readVarint, WIRE_BYTES, WIRE_VARINT, type Field } from './onnx-wire.ts';


/** A graph input or output (ValueInfoProto): its name, and the rank of its tensor type (null where it has no shape). */
export interface ValueInfo {
  field: Field;
  name: string;
  rank: number | null;
  /** Its tensor type's element type (TensorProto.DataType), or null. */
  type: number | null;
  /** Its dimensions (a size, a symbol's name, or null where it has neither), null where it has no shape. */
  dims: (number | string | null)[] | null;
}

/** An initializer (TensorProto). */
export interface TensorInfo {
  field: Field;
  type: number;
  dims: number[];
  /** The tensor's bytes, or null where they are not raw or external data this can read. */
  data: Uint8Array | null;
}

/** A mounted external-data file's bytes by its location, or null. */
export type ExternalData = (location: string) => Uint8Array | null;

export interface OnnxGraph {
  /** ModelProto.graph. */
  field: Field;
  /** The graph's fields, in order. */
  fields: Field[];
  /** Its nodes by field, in order. */
  nodes: Map<Field, NodeInfo>;
  /** How many nodes read each value. */
  readers: Map<string, number>;
  inputs: ValueInfo[];
  outputs: ValueInfo[];
  /** Its initializers by name (the last of a name), and each initializer field's name. */
  tensors: Map<string, TensorInfo>;
  initializers: Map<Field, string>;
}

/** The model's main graph, read; null where it has none. Initializers in external data are read through `external`. */
export function readGraph(model: Uint8Array, external: ExternalData = () => null): OnnxGraph | null {
  const field = graphFieldOf(model);
  if (!field) return null;
  const graph: OnnxGraph = {
    field,
    fields: [...fields(model, field.payloadStart, field.end)],
    nodes: new Map(),
    readers: new Map(),
    inputs: [],
    outputs: [],
    tensors: new Map(),
    initializers: new Map(),
  };
  for (const f of graph.fields) {
    if (f.wire !== WIRE_BYTES) continue;
    if (f.number === GRAPH_NODE) {
      const n = parseNode(model, f);
      graph.nodes.set(f, n);
      for (const i of n.inputs) graph.readers.set(i, (graph.readers.get(i) ?? 0) + 1);
    } else if (f.number === GRAPH_INITIALIZER) {
      const [name, tensor] = parseTensor(model, f, external);
      graph.tensors.set(name, tensor);
      graph.initializers.set(f, name);
    } else if (f.number === GRAPH_INPUT) graph.inputs.push(parseValue(model, f));
    else if (f.number === GRAPH_OUTPUT) graph.outputs.push(parseValue(model, f));
  }
  return graph;
}

/** A ValueInfoProto: its name, element type and dimensions (and their count). */
export function parseValue(buf: Uint8Array, field: Field): ValueInfo {
  let name = '';
  let type: number | null = null;
  let dims: (number | string | null)[] | null = null;
  for (const f of fields(buf, field.payloadStart, field.end)) {
    if (f.number === VALUE_NAME) name = text(buf, f);
    else if (f.number === VALUE_TYPE) {
      // TypeProto.tensor_type (1) → TypeProto.Tensor: elem_type (1), shape (2) → TensorShapeProto.dim (1)* → dim_value (1) | dim_param (2)
      for (const t of fields(buf, f.payloadStart, f.end)) {
        if (t.number !== 1 || t.wire !== WIRE_BYTES) continue;
        for (const s of fields(buf, t.payloadStart, t.end)) {
          if (s.number === 1 && s.wire === WIRE_VARINT) type = varintValue(buf, s);
          if (s.number !== 2 || s.wire !== WIRE_BYTES) continue;
          dims = [];
          for (const d of fields(buf, s.payloadStart, s.end)) {
            if (d.number !== 1) continue;
            let dim: number | string | null = null;
            for (const v of fields(buf, d.payloadStart, d.end)) {
              if (v.number === 1 && v.wire === WIRE_VARINT) dim = varintValue(buf, v);
              else if (v.number === 2 && v.wire === WIRE_BYTES && v.end > v.payloadStart) dim = text(buf, v);
            }
            dims.push(dim);
          }
        }
      }
    }
  }
  return { field, name, rank: dims ? dims.length : null, type, dims };
}

export function parseTensor(buf: Uint8Array, field: Field, external: ExternalData): [string, TensorInfo] {
  let name = '';
  let type = 0;
  const dims: number[] = [];
  let raw: Uint8Array | null = null;
  for (const f of fields(buf, field.payloadStart, field.end)) {
    if (f.number === 1 && f.wire === WIRE_VARINT) dims.push(varintValue(buf, f));
    else if (f.number === 1 && f.wire === WIRE_BYTES) {
      // packed dims
      for (let pos = f.payloadStart; pos < f.end; ) {
        const [value, next] = readVarint(buf, pos);
        dims.push(value);
        pos = next;
      }
    } else if (f.number === 2) type = varintValue(buf, f);
    else if (f.number === 8) name = text(buf, f);
    else if (f.number === 9) raw = buf.subarray(f.payloadStart, f.end);
  }
  const entries = externalEntries(buf, field.payloadStart, field.end) ?? new Map<string, string>();
  let data = raw;
  const location = entries.get('location');
  if (location !== undefined) {
    const file = external(location);
    const offset = Number(entries.get('offset') ?? 0);
    const length = entries.has('length') ? Number(entries.get('length')) : file ? file.length - offset : 0;
    data = file && offset + length <= file.length ? file.subarray(offset, offset + length) : null;
  }
  return [name, { field, type, dims, data }];
}

/** A TensorProto's external-data entries (location, offset, length, …) by key, or null where it has none. */
export function externalEntries(buf: Uint8Array, start: number, end: number): Map<string, string> | null {
  let entries: Map<string, string> | null = null;
  for (const f of fields(buf, start, end)) {
    if (f.number !== 13 || f.wire !== WIRE_BYTES) continue;
    let key = '';
    let value = '';
    for (const e of fields(buf, f.payloadStart, f.end)) {
      if (e.number === 1) key = text(buf, e);
      else if (e.number === 2) value = text(buf, e);
    }
    (entries ??= new Map()).set(key, value);
  }
  return entries;
}

/** The version of the default (ai.onnx) operator set the model imports, or 0. */
export function defaultOpset(model: Uint8Array): number {
  for (const f of fields(model, 0, model.length)) {
    if (f.number !== MODEL_OPSET_IMPORT || f.wire !== WIRE_BYTES) continue;
    let domain = '';
    let version = 0;
    for (const o of fields(model, f.payloadStart, f.end)) {
      if (o.number === 1) domain = text(model, o);
      else if (o.number === 2) version = varintValue(model, o);
    }
    if (domain === '' || domain === 'ai.onnx') return version;
  }
  return 0;
}
