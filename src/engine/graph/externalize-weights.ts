/**
 * One copy of the weights in wasm memory instead of two.
 *
 * onnxruntime-web creates a session from an ONNX file by copying the whole file into the wasm
 * heap, parsing it there, and copying every initializer out of the parsed file into a tensor of
 * its own. The file's copy is freed afterwards, but a wasm heap never shrinks: a model's weights
 * held the heap at least twice, for as long as the page lives. An initializer stored as ONNX
 * *external data* instead is copied once, straight from a JavaScript buffer ("mounted" by the
 * session's `externalData` option) into its tensor.
 *
 * `externalizeWeights` rewrites a model whose weights are inline (`raw_data`, as the hub's
 * single-file exports ship them) into a small graph whose large initializers name external data
 * in the ORIGINAL buffer, at the offsets where their bytes already are: no byte of weight is
 * copied, the graph is what remains of the file (a few hundred KiB). The result means exactly
 * the same model: every initializer keeps its name, type and shape, and its data are the same
 * bytes (test/engine/externalize-weights.test.ts decodes both with an independent ONNX reader).
 *
 * The ONNX schema's fields (onnx-wire.ts reads and writes the wire format): ModelProto.graph = 7;
 * GraphProto.initializer = 5; TensorProto.raw_data = 9, external_data = 13
 * (StringStringEntryProto: key 1, value 2), data_location = 14 (EXTERNAL = 1).
 */
import { externalDataFields, GRAPH_INITIALIZER, MODEL_GRAPH } from './onnx-messages.ts';
import { fields, Pieces, readVarint, WIRE_BYTES, WIRE_VARINT, type Field } from './onnx-wire.ts';

export const TENSOR_RAW_DATA = 9;
export const TENSOR_DATA_LOCATION = 14;
export const DATA_LOCATION_EXTERNAL = 1;

/** Initializers smaller than this stay inline: moving them saves nothing. */
export const MIN_EXTERNAL_BYTES = 1024;

export interface ExternalizedModel {
  /** The rewritten model: the original less the moved `raw_data`, plus their external-data references. */
  graph: Uint8Array;
  /** How many initializers now read from external data, and their bytes. */
  moved: number;
  movedBytes: number;
}

/** The tensor rewritten to read from `location`, or null to keep it as it is. */
function externalTensor(buf: Uint8Array, start: number, end: number, location: string, minBytes: number): { tensor: Pieces; bytes: number } | null {
  let raw: Field | null = null;
  for (const f of fields(buf, start, end)) {
    if (f.number === TENSOR_DATA_LOCATION && f.wire === WIRE_VARINT && readVarint(buf, f.payloadStart)[0] === DATA_LOCATION_EXTERNAL) return null;
    if (f.number === TENSOR_RAW_DATA && f.wire === WIRE_BYTES) raw = f;
  }
  if (!raw || raw.end - raw.payloadStart < minBytes) return null;
  const tensor = new Pieces();
  for (const f of fields(buf, start, end)) {
    if (f.number === TENSOR_RAW_DATA || f.number === TENSOR_DATA_LOCATION) continue;
    tensor.push(buf.subarray(f.start, f.end));
  }
  const length = raw.end - raw.payloadStart;
  externalDataFields(tensor, location, raw.payloadStart, length);
  return { tensor, bytes: length };
}

/**
 * `model` (an ONNX ModelProto) with every inline initializer of at least `minBytes` of its main
 * graph turned into external data of the file `location`, which must then be `model` itself
 * (mounted under that name); or null when no initializer qualifies (already external, or small).
 */
export function externalizeWeights(model: Uint8Array, location: string, minBytes = MIN_EXTERNAL_BYTES): ExternalizedModel | null {
  const out = new Pieces();
  let moved = 0;
  let movedBytes = 0;
  for (const m of fields(model, 0, model.length)) {
    if (m.number !== MODEL_GRAPH || m.wire !== WIRE_BYTES) {
      out.push(model.subarray(m.start, m.end));
      continue;
    }
    const graph = new Pieces();
    for (const g of fields(model, m.payloadStart, m.end)) {
      const rewritten = g.number === GRAPH_INITIALIZER && g.wire === WIRE_BYTES ? externalTensor(model, g.payloadStart, g.end, location, minBytes) : null;
      if (rewritten) {
        graph.bytesField(GRAPH_INITIALIZER, rewritten.tensor);
        moved++;
        movedBytes += rewritten.bytes;
      } else graph.push(model.subarray(g.start, g.end));
    }
    out.bytesField(MODEL_GRAPH, graph);
  }
  if (moved === 0) return null;
  return { graph: out.concat(), moved, movedBytes };
}
