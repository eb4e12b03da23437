/**
 * A model file with inline weights, as a small graph whose weights are read from the file itself.
 *
 * onnxruntime-node creates a session from a path by parsing the whole file; the load-time rewrites
 * (node-session-rewrites.ts) need the graph as bytes. Reading a 540 MB file (the 135M-shaped
 * model's fp32 export) to rewrite it, and holding it while onnxruntime copies its weights out,
 * costs half a gigabyte at the peak. `externalizeFile` makes what engine/graph/externalize-weights.ts
 * makes from the bytes (the same bytes: test/server/externalize-file.test.ts), reading only what
 * is not weight: every field's header, and every field but the large `raw_data` payloads, which
 * it names as external data at their offsets in the file. Given that graph and the file's folder
 * (`session.model_external_initializers_file_folder_path`), onnxruntime reads the weights from
 * the file where they are.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { DATA_LOCATION_EXTERNAL, MIN_EXTERNAL_BYTES, TENSOR_DATA_LOCATION, TENSOR_RAW_DATA } from '../engine/graph/externalize-weights.ts';
import { externalDataFields, GRAPH_INITIALIZER, MODEL_GRAPH } from '../engine/graph/onnx-messages.ts';
import { fields, Pieces, readVarint, WIRE_BYTES, WIRE_VARINT, type Field } from '../engine/graph/onnx-wire.ts';
/** A field's tag and length fit in 20 bytes (two varints of at most 10). */
const HEADER_BYTES = 20;

/** Bytes read ahead at once: the graph's small fields lie together, between the weights. */
const WINDOW_BYTES = 1 << 16;

/** Reads a file's bytes by range, small ranges through a window read ahead. */
class RangeReader {
  #window: Uint8Array = new Uint8Array(0);
  #windowStart = 0;

  constructor(
    private readonly file: FileHandle,
    readonly size: number,
  ) {}

  async bytes(start: number, end: number): Promise<Uint8Array> {
    if (end - start > WINDOW_BYTES) return this.#read(start, end);
    if (start < this.#windowStart || end > this.#windowStart + this.#window.length) {
      this.#window = await this.#read(start, Math.min(this.size, start + WINDOW_BYTES));
      this.#windowStart = start;
    }
    if (end > this.#windowStart + this.#window.length) throw new Error(`ONNX model: the file ends at ${this.size}, inside a field that runs to ${end}`);
    return this.#window.slice(start - this.#windowStart, end - this.#windowStart);
  }

  async #read(start: number, end: number): Promise<Uint8Array> {
    const out = new Uint8Array(end - start);
    let at = 0;
    while (at < out.length) {
      const { bytesRead } = await this.file.read(out, at, out.length - at, start + at);
      if (bytesRead === 0) throw new Error(`ONNX model: the file ends at ${start + at}, inside a field that runs to ${end}`);
      at += bytesRead;
    }
    return out;
  }

  /** The fields of the message in [start, end) of the file, read header by header (the payloads are not read). */
  async *fields(start: number, end: number): AsyncGenerator<Field> {
    let pos = start;
    while (pos < end) {
      const header = await this.bytes(pos, Math.min(end, pos + HEADER_BYTES));
      // One field of a message `end - pos` bytes long, parsed from its header; offsets moved back to the file's.
      const [field] = fields(header, 0, end - pos);
      const f = field!;
      yield { number: f.number, wire: f.wire, start: pos + f.start, end: pos + f.end, payloadStart: pos + f.payloadStart };
      pos += f.end;
    }
  }
}

/**
 * The file at `path` (an ONNX ModelProto) with every inline initializer of at least `minBytes` of
 * its main graph turned into external data of `location` (the file's own name, beside which the
 * session reads it); null when none qualifies. Byte for byte what `externalizeWeights` makes from
 * the file's bytes.
 */
export async function externalizeFile(path: string, location: string, minBytes = MIN_EXTERNAL_BYTES): Promise<Uint8Array | null> {
  const file = await open(path, 'r');
  try {
    const reader = new RangeReader(file, (await file.stat()).size);
    const out = new Pieces();
    let moved = 0;
    for await (const m of reader.fields(0, reader.size)) {
      if (m.number !== MODEL_GRAPH || m.wire !== WIRE_BYTES) {
        out.push(await reader.bytes(m.start, m.end));
        continue;
      }
      const graph = new Pieces();
      for await (const g of reader.fields(m.payloadStart, m.end)) {
        const tensor = g.number === GRAPH_INITIALIZER && g.wire === WIRE_BYTES ? await externalTensor(reader, g, location, minBytes) : null;
        if (tensor) {
          graph.bytesField(GRAPH_INITIALIZER, tensor);
          moved++;
        } else graph.push(await reader.bytes(g.start, g.end));
      }
      out.bytesField(MODEL_GRAPH, graph);
    }
    return moved === 0 ? null : out.concat();
  } finally {
    await file.close();
  }
}

/** The initializer rewritten to read its `raw_data` from `location`, or null to keep it as it is. */
async function externalTensor(reader: RangeReader, tensor: Field, location: string, minBytes: number): Promise<Pieces | null> {
  const parts: Field[] = [];
  let raw: Field | null = null;
  for await (const f of reader.fields(tensor.payloadStart, tensor.end)) {
    if (f.number === TENSOR_DATA_LOCATION && f.wire === WIRE_VARINT) {
      const value = await reader.bytes(f.payloadStart, f.end);
      if (readVarint(value, 0)[0] === DATA_LOCATION_EXTERNAL) return null;
      continue;
    }
    if (f.number === TENSOR_RAW_DATA && f.wire === WIRE_BYTES) raw = f;
    else parts.push(f);
  }
  if (!raw || raw.end - raw.payloadStart < minBytes) return null;
  const out = new Pieces();
  for (const f of parts) out.push(await reader.bytes(f.start, f.end));
  externalDataFields(out, location, raw.payloadStart, raw.end - raw.payloadStart);
  return out;
}
