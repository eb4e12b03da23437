/**
 * Reads the initializers of an ONNX file straight from its protobuf bytes (an independent reader
 * for tests, no generator code): ModelProto.graph (7) → GraphProto.initializer (5) → TensorProto
 * dims (1), data_type (2), name (8), raw_data (9), external_data (13: location / offset / length).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface OnnxInitializer {
  readonly name: string;
  readonly dataType: number;
  readonly dims: number[];
  readonly raw: Uint8Array;
}

interface Field {
  no: number;
  wire: number;
  varint: bigint;
  bytes: Uint8Array;
}

function* fields(buf: Uint8Array): Generator<Field> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[pos++];
      if (b === undefined) throw new Error('protobuf: truncated varint');
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) yield { no, wire, varint: varint(), bytes: new Uint8Array(0) };
    else if (wire === 2) {
      const len = Number(varint());
      yield { no, wire, varint: 0n, bytes: buf.subarray(pos, pos + len) };
      pos += len;
    } else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else throw new Error(`protobuf: wire type ${wire}`);
  }
}

function packedVarints(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let v = 0n;
  let shift = 0n;
  for (const b of bytes) {
    v |= BigInt(b & 0x7f) << shift;
    if (b & 0x80) shift += 7n;
    else {
      out.push(Number(v));
      v = 0n;
      shift = 0n;
    }
  }
  return out;
}

/** The initializers of `path` whose name passes `want` (all by default). */
export function readOnnxInitializers(path: string, want: (name: string) => boolean = () => true): Map<string, OnnxInitializer> {
  const file = new Uint8Array(readFileSync(path));
  const out = new Map<string, OnnxInitializer>();
  const externals = new Map<string, Uint8Array>();
  for (const m of fields(file)) {
    if (m.no !== 7 || m.wire !== 2) continue;
    for (const g of fields(m.bytes)) {
      if (g.no !== 5 || g.wire !== 2) continue;
      let name = '';
      let dataType = 0;
      const dims: number[] = [];
      let raw: Uint8Array | null = null;
      const ext: Record<string, string> = {};
      for (const t of fields(g.bytes)) {
        if (t.no === 1) t.wire === 0 ? dims.push(Number(t.varint)) : dims.push(...packedVarints(t.bytes));
        else if (t.no === 2) dataType = Number(t.varint);
        else if (t.no === 8) name = new TextDecoder().decode(t.bytes);
        else if (t.no === 9) raw = t.bytes;
        else if (t.no === 13) {
          let k = '';
          let v = '';
          for (const e of fields(t.bytes)) {
            if (e.no === 1) k = new TextDecoder().decode(e.bytes);
            if (e.no === 2) v = new TextDecoder().decode(e.bytes);
          }
          ext[k] = v;
        }
      }
      if (!want(name)) continue;
      if (!raw && ext['location']) {
        const loc = ext['location'];
        let data = externals.get(loc);
        if (!data) {
          data = new Uint8Array(readFileSync(join(dirname(path), loc)));
          externals.set(loc, data);
        }
        const offset = Number(ext['offset'] ?? 0);
        const length = ext['length'] !== undefined ? Number(ext['length']) : data.length - offset;
        raw = data.subarray(offset, offset + length);
      }
      if (!raw) throw new Error(`${path}: initializer ${name} has no raw_data (typed fields are not read here)`);
      out.set(name, { name, dataType, dims, raw: raw.slice() });
    }
  }
  return out;
}
