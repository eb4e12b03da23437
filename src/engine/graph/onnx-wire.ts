/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), as much of it as
 * the load-time rewrites of an ONNX model need (externalize-weights.ts, logits-to-keep.ts): read
 * the fields of a message where they lie, and write messages as lists of pieces, so that the
 * large payloads of the original (weights) are referenced, never copied.
 */
export const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
const WIRE_FIXED32 = 5;

/** A field of a message: its number, wire type, and where its encoding (tag included) and payload lie. */
export interface Field {
  number: number;
  wire: number;
  start: number;
  end: number;
  payloadStart: number;
}

export function readVarint(buf: Uint8Array, pos: number): [value: number, next: number] {
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

/** A varint read as a signed 64-bit integer (a negative int64 is ten bytes of two's complement, which `readVarint` cannot hold). */
export function readSignedVarint(buf: Uint8Array, pos: number): [value: number, next: number] {
  let value = 0n;
  let shift = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new Error('ONNX model: truncated varint');
    const byte = buf[pos++]!;
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [Number(BigInt.asIntN(64, value)), pos];
    shift += 7n;
  }
  throw new Error('ONNX model: varint longer than 10 bytes');
}

/** The fields of the message in buf[start, end), in order. */
export function* fields(buf: Uint8Array, start: number, end: number): Generator<Field> {
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
export class Pieces {
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

export const utf8 = new TextEncoder();
