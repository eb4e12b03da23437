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

/** Where each moved initializer's bytes come from in the source (`from`, `length`) and go in the new file (`at`). */
export interface CompactedPiece {
  from: number;
  length: number;
  at: number;
}

/** A compaction planned, its bytes not yet copied: the new file is `size` bytes, `pieces` in order, zeros between them. */
export interface CompactPlan {
  /** The graph, its initializers of `location` now reading `into`. */
  graph: Uint8Array;
  pieces: CompactedPiece[];
  size: number;
}

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
 * `source`) reading the same bytes from a new file mounted as `into`, and the new file's bytes;
 * null where none names `location`. Throws where an initializer's range lies outside `source`.
 */
export function compactExternal(graph: Uint8Array, location: string, source: Uint8Array, into: string): CompactedExternal | null {
  const plan = planCompact(graph, location, source.byteLength, into);
  if (!plan) return null;
  const data = new Uint8Array(plan.size);
  for (const p of plan.pieces) data.set(source.subarray(p.from, p.from + p.length), p.at);
  return { graph: plan.graph, data, moved: plan.pieces.length };
}

/**
 * `compactExternal` without the copy: the rewritten graph and where each moved initializer's bytes
 * go in the new file (`sourceBytes`: the size of `location`), for a writer that stores the new file
 * from the source's own bytes, piece by piece (load/storage/gathered-bytes.ts), so that the whole
 * copy never exists in memory.
 */
export function planCompact(graph: Uint8Array, location: string, sourceBytes: number, into: string): CompactPlan | null {
  const graphField = graphFieldOf(graph);
  if (!graphField) return null;
  const ranges: { field: { start: number; end: number; payloadStart: number }; piece: CompactedPiece }[] = [];
  let size = 0;
  for (const g of fields(graph, graphField.payloadStart, graphField.end)) {
    if (g.number !== GRAPH_INITIALIZER || g.wire !== WIRE_BYTES) continue;
    const entries = externalEntries(graph, g.payloadStart, g.end);
    if (entries?.get('location') !== location) continue;
    const offset = Number(entries.get('offset') ?? 0);
    const length = entries.has('length') ? Number(entries.get('length')) : sourceBytes - offset;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 || offset + length > sourceBytes) {
      throw new Error(`ONNX model: an initializer reads bytes ${offset}..${offset + length} of ${location}, which has ${sourceBytes}`);
    }
    const at = Math.ceil(size / ALIGN) * ALIGN;
    ranges.push({ field: g, piece: { from: offset, length, at } });
    size = at + length;
  }
  if (ranges.length === 0) return null;
  const byStart = new Map(ranges.map((r) => [r.field.start, r.piece]));
  const out = new Pieces();
  for (const g of fields(graph, graphField.payloadStart, graphField.end)) {
    const piece = byStart.get(g.start);
    if (!piece) {
      out.push(graph.subarray(g.start, g.end));
      continue;
    }
    const tensor = new Pieces();
    for (const f of fields(graph, g.payloadStart, g.end)) {
      if (f.number === TENSOR_EXTERNAL_DATA || f.number === TENSOR_DATA_LOCATION) continue;
      tensor.push(graph.subarray(f.start, f.end));
    }
    externalDataFields(tensor, into, piece.at, piece.length);
    out.bytesField(GRAPH_INITIALIZER, tensor);
  }
  return { graph: withGraph(graph, graphField, out), pieces: ranges.map((r) => r.piece), size };
}
