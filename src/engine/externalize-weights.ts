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
 * Protobuf wire format (https://protobuf.dev/programming-guides/encoding/) over the ONNX schema:
 * ModelProto.graph = 7; GraphProto.initializer = 5; TensorProto.raw_data = 9,
 * external_data = 13 (StringStringEntryProto: key 1, value 2), data_location = 14 (EXTERNAL = 1).
 */

const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const TENSOR_RAW_DATA = 9;
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const DATA_LOCATION_EXTERNAL = 1;

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** Initializers smaller than this stay inline: moving them saves nothing. */
export const MIN_EXTERNAL_BYTES = 1024;

export interface ExternalizedModel {
  /** The rewritten model: the original less the moved `raw_data`, plus their external-data references. */
  graph: Uint8Array;
  /** How many initializers now read from external data, and their bytes. */
  moved: number;
  movedBytes: number;
}

/** A field of a message: its number, wire type, and where its encoding (tag included) and payload lie. */
interface Field {
  number: number;
  wire: number;
  start: number;
  end: number;
  payloadStart: number;
}

function readVarint(buf: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new Error('ONNX model: truncated varint');
    const byte = buf[pos++]!;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, pos];
    scale *= 128;
  }
  throw new Error('ONNX model: varint longer than 10 bytes');
}

/** The fields of the message in buf[start, end), in order. */
function* fields(buf: Uint8Array, start: number, end: number): Generator<Field> {
  let pos = start;
  while (pos < end) {
    const fieldStart = pos;
    const [tag, afterTag] = readVarint(buf, pos);
    const wire = tag % 8;
    const number = Math.floor(tag / 8);
    let payloadStart = afterTag;
    switch (wire) {
      case WIRE_VARINT:
        pos = readVarint(buf, afterTag)[1];
        break;
      case WIRE_FIXED64:
        pos = afterTag + 8;
        break;
      case WIRE_FIXED32:
        pos = afterTag + 4;
        break;
      case WIRE_BYTES: {
        const [length, afterLength] = readVarint(buf, afterTag);
        payloadStart = afterLength;
        pos = afterLength + length;
        break;
      }
      default:
        throw new Error(`ONNX model: unsupported protobuf wire type ${wire} (field ${number})`);
    }
    if (pos > end) throw new Error(`ONNX model: field ${number} runs past the end of its message`);
    yield { number, wire, start: fieldStart, end: pos, payloadStart };
  }
}

/** Encoded output as a list of pieces; only lengths are computed, large payloads are not copied. */
class Pieces {
  readonly parts: Uint8Array[] = [];
  length = 0;
  push(part: Uint8Array): void {
    if (part.length === 0) return;
    this.parts.push(part);
    this.length += part.length;
  }
  varint(value: number): void {
    const bytes: number[] = [];
    let v = value;
    while (v >= 0x80) {
      bytes.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    bytes.push(v);
    this.push(Uint8Array.from(bytes));
  }
  bytesField(number: number, payload: Pieces | Uint8Array): void {
    this.varint(number * 8 + WIRE_BYTES);
    this.varint(payload.length);
    if (payload instanceof Pieces) for (const p of payload.parts) this.push(p);
    else this.push(payload);
  }
  concat(): Uint8Array {
    const out = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

const utf8 = new TextEncoder();

function entry(key: string, value: string): Pieces {
  const e = new Pieces();
  e.bytesField(1, utf8.encode(key));
  e.bytesField(2, utf8.encode(value));
  return e;
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
  tensor.bytesField(TENSOR_EXTERNAL_DATA, entry('location', location));
  tensor.bytesField(TENSOR_EXTERNAL_DATA, entry('offset', String(raw.payloadStart)));
  tensor.bytesField(TENSOR_EXTERNAL_DATA, entry('length', String(length)));
  tensor.varint(TENSOR_DATA_LOCATION * 8 + WIRE_VARINT);
  tensor.varint(DATA_LOCATION_EXTERNAL);
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
