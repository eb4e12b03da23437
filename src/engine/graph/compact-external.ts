/**
 * The bytes a rewritten graph still reads from a file, gathered into a file of their own.
 *
 * After the load's rewrites (rewrite-session.ts) a model's own file is mounted as the external data
 * of its externalized graph, but most of it may no longer be read: at q4 the int8 projections and
 * the engine's head kernel replace the 4-bit weights and the float embedding, and the graph reads
 * 4 MiB of a 176 MiB file. A kept rewrite (load/rewritten-graphs.ts) that held only the graph would
 * make every return visit read the whole file from storage for those bytes. `compactExternal`
 * copies every initializer that names `location` into one new buffer, one after the other (each
 * at an offset aligned to `ALIGN` bytes), and rewrites those initializers to read it under `into`:
 * the graph means the same model (every initializer keeps its name, type, shape and bytes:
 * test/engine/compact-external.test.ts reads both with the graph reader), and `location` need not
 * be mounted any more.
 *
 * TensorProto fields (onnx-wire.ts): external_data = 13 (StringStringEntryProto: key 1, value 2),
 * data_location = 14.
 */
import { externalEntries } from './onnx-graph.ts';
import { externalDataFields, GRAPH_INITIALIZER, graphFieldOf, withGraph } from './onnx-messages.ts';
import { fields, Pieces, WIRE_BYTES } from './onnx-wire.ts';

const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
/** Each copied tensor starts at a multiple of this in the new file. */
export const ALIGN = 64;

export interface CompactedExternal {
  /** The graph, its initializers of `location` now reading `into`. */
  graph: Uint8Array;
  /** The new file: their bytes, in the graph's order. */
  data: Uint8Array;
  /** How many initializers were moved. */
  moved: number;
}

/**
 * `graph` with every main-graph initializer whose external data is in `location` (given as
 * `source`) reading the same bytes from a new file mounted as `into`; null where none names
 * `location`. Throws where an initializer's range lies outside `source`.
 */
export function compactExternal(graph: Uint8Array, location: string, source: Uint8Array, into: string): CompactedExternal | null {
  const graphField = graphFieldOf(graph);
  if (!graphField) return null;
  const ranges: { field: { start: number; end: number; payloadStart: number }; offset: number; length: number; at: number }[] = [];
  let size = 0;
  for (const g of fields(graph, graphField.payloadStart, graphField.end)) {
    if (g.number !== GRAPH_INITIALIZER || g.wire !== WIRE_BYTES) continue;
    const entries = externalEntries(graph, g.payloadStart, g.end);
    if (entries?.get('location') !== location) continue;
    const offset = Number(entries.get('offset') ?? 0);
    const length = entries.has('length') ? Number(entries.get('length')) : source.byteLength - offset;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > source.byteLength) {
      throw new Error(`ONNX model: an initializer reads bytes ${offset}..${offset + length} of ${location}, which has ${source.byteLength}`);
    }
    const at = Math.ceil(size / ALIGN) * ALIGN;
    ranges.push({ field: g, offset, length, at });
    size = at + length;
  }
  if (ranges.length === 0) return null;
  const data = new Uint8Array(size);
  const byStart = new Map(ranges.map((r) => [r.field.start, r]));
  const out = new Pieces();
  for (const g of fields(graph, graphField.payloadStart, graphField.end)) {
    const r = byStart.get(g.start);
    if (!r) {
      out.push(graph.subarray(g.start, g.end));
      continue;
    }
    data.set(source.subarray(r.offset, r.offset + r.length), r.at);
    const tensor = new Pieces();
    for (const f of fields(graph, g.payloadStart, g.end)) {
      if (f.number === TENSOR_EXTERNAL_DATA || f.number === TENSOR_DATA_LOCATION) continue;
      tensor.push(graph.subarray(f.start, f.end));
    }
    externalDataFields(tensor, into, r.at, r.length);
    out.bytesField(GRAPH_INITIALIZER, tensor);
  }
  return { graph: withGraph(graph, graphField, out), data, moved: ranges.length };
}
