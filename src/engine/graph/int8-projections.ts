/**
 * 4-bit projections multiplied by 8-bit integer kernels, on wasm.
 *
 * onnxruntime's com.microsoft MatMulNBits (the hub's `model_q4.onnx`) has 4-bit MLAS kernels for
 * x86 and ARM only. In onnxruntime-web's wasm build it dequantizes its whole weight matrix into
 * float32 on every call, so a q4 decode step costs 6–26× the same products in float32
 * (docs/threads.md, "Where a q4 step goes"). Its 8-bit integer product, MatMulInteger, has a wasm
 * SIMD kernel.
 *
 * `int8Projections` rewrites, at load, every MatMulNBits `y = x · W` (bits 4, float32 or float16
 * scales, optional packed uint8 zero points and bias, no g_idx) into
 *
 *   weights     W8[k, n] = round(W[k, n] / c[n]),   c[n] = max_k |W[k, n]| / 127
 *               (W the 4-bit matrix dequantized: (q - zero point) · block scale; int8 [K, N],
 *               one float32 scale per output column)
 *   activations r = max(max_k |x[k]| / 127, 1e-30) per row (the last axis),
 *               x8 = uint8(round(x / r) + 128)
 *   product     y = MatMulIntegerToFloat(x8, W8, 1, c, 128) · r   (+ bias): float(x8 · W8 - 128 · ΣW8) · c · r
 *
 * The integer product is exact (int32 accumulation); what differs from MatMulNBits is rounding
 * W to 255 levels per column and each row of x to 255 levels, the activation half of which is
 * what llama.cpp does too (its Q4_0 dot product quantizes x to 8 bits per block of 32). Each row
 * is quantized on its own, so a row's product does not depend on the rows fed beside it: a pass
 * over a state and the same tokens over a cached prefix get the same numbers, as with float32.
 * The activations of a MatMulNBits input shared by several projections (q, k, v; gate, up) are
 * quantized once. With float16 activations and scales (q4f16), the same is done in float32
 * between Casts.
 *
 * The int8 weights and column scales are written into one new buffer, mounted as external data
 * `INT8_WEIGHTS`; the 4-bit initializers no other node reads are dropped from the graph.
 */
import {
  externalTensor,
  GRAPH_INITIALIZER,
  GRAPH_NODE,
  int64Tensor,
  intAttribute,
  intsAttribute,
  node,
  type NodeInfo,
  rawTensor,
  TensorType,
  withGraph,
} from './onnx-messages.ts';
import { decodeFloat16Bits } from '../runtime/float16.ts';
import { defaultOpset, readGraph, type ExternalData, type TensorInfo } from './onnx-graph.ts';
import { Pieces, WIRE_BYTES } from './onnx-wire.ts';

/** The name under which the rewritten weights are mounted as external data (a key of onnxruntime-web's mount table, not a file). */
export const INT8_WEIGHTS = 'jev-int8-weights';

/** The symmetric 8-bit range both operands are rounded to. */
const LEVELS = 127;
/** Offsets inside the new buffer are aligned to this. */
const ALIGN = 64;
const P = 'jev_int8/';

export interface Int8Rewrite {
  /** The rewritten model. */
  graph: Uint8Array;
  /** The external data `INT8_WEIGHTS` it reads its int8 weights and column scales from. */
  weights: Uint8Array;
  /** How many MatMulNBits were rewritten. */
  projections: number;
}

/** One MatMulNBits to rewrite. */
interface Projection {
  node: NodeInfo;
  k: number;
  n: number;
  blockSize: number;
  /** float16 activations and scales (q4f16): the arithmetic is done in float32 between Casts. */
  half: boolean;
  q: Uint8Array;
  scales: Float32Array;
  zeroPoints: Uint8Array | null;
  bias: string | null;
  /** Where its int8 weights and column scales go in the new buffer. */
  weightsAt: number;
  scalesAt: number;
}

/** float32 scales as they are; float16 ones (q4f16) decoded to float32. */
const floats = (bytes: Uint8Array, half: boolean): Float32Array =>
  half ? decodeFloat16Bits(new Uint16Array(bytes.slice().buffer)) : new Float32Array(bytes.slice().buffer);
const align = (at: number) => Math.ceil(at / ALIGN) * ALIGN;

/** The MatMulNBits this can rewrite, with its weights; null for any other node. */
function projectionOf(node: NodeInfo, tensors: Map<string, TensorInfo>): Omit<Projection, 'weightsAt' | 'scalesAt'> | null {
  if (node.op !== 'MatMulNBits' || node.domain !== 'com.microsoft') return null;
  const [, b, s, zp = '', gIdx = '', bias = ''] = node.inputs;
  const k = node.ints.get('K');
  const n = node.ints.get('N');
  const bits = node.ints.get('bits') ?? 4;
  const blockSize = node.ints.get('block_size');
  if (!k || !n || bits !== 4 || !blockSize || blockSize % 2 !== 0 || gIdx !== '') return null;
  const blocks = Math.ceil(k / blockSize);
  const q = tensors.get(b ?? '');
  const scales = tensors.get(s ?? '');
  const zeroPoints = zp ? tensors.get(zp) : undefined;
  if (q?.type !== TensorType.UINT8 || q.data?.length !== n * blocks * (blockSize / 2)) return null;
  const half = scales?.type === TensorType.FLOAT16;
  if ((scales?.type !== TensorType.FLOAT && !half) || scales.data?.length !== n * blocks * (half ? 2 : 4)) return null;
  if (zp && (zeroPoints?.type !== TensorType.UINT8 || zeroPoints.data?.length !== n * Math.ceil(blocks / 2))) return null;
  return { node, k, n, blockSize, half, q: q.data, scales: floats(scales.data, half), zeroPoints: zeroPoints?.data ?? null, bias: bias || null };
}

/** DEVIATION[z << 8 | byte]: the larger |nibble - z| of the byte's two nibbles. */
const DEVIATION = Uint8Array.from({ length: 16 * 256 }, (_, i) => Math.max(Math.abs((i & 15) - (i >> 8)), Math.abs(((i >> 4) & 15) - (i >> 8))));

/** Columns requantized together, so that the int8 rows are written in runs, not one byte per row. */
const TILE = 64;

/**
 * Writes W8 (int8 [K, N]) and c (float32 [N]) of a 4-bit matrix: W = (q - z) · s, dequantized per
 * block, rounded to `LEVELS` per column (each value as round((q - z) · (s / c))).
 */
export function requantize(p: Pick<Projection, 'k' | 'n' | 'blockSize' | 'q' | 'scales' | 'zeroPoints'>, w8: Int8Array, c: Float32Array): void {
  const { k, n, blockSize } = p;
  const blocks = Math.ceil(k / blockSize);
  const blob = blockSize / 2;
  const zpBytes = Math.ceil(blocks / 2);
  const zero = (col: number, b: number) => {
    const byte = p.zeroPoints ? p.zeroPoints[col * zpBytes + (b >> 1)]! : 0x88;
    return b & 1 ? byte >> 4 : byte & 15;
  };
  const q = p.q;
  // Each column's largest |W|: its blocks' scale times their largest |q - z|.
  for (let col = 0; col < n; col++) {
    let absMax = 0;
    for (let b = 0; b < blocks; b++) {
      const z = zero(col, b) << 8;
      const base = (col * blocks + b) * blob;
      const bytes = Math.ceil(Math.min(blockSize, k - b * blockSize) / 2);
      let most = 0;
      for (let i = 0; i < bytes; i++) {
        const d = DEVIATION[z | q[base + i]!]!;
        if (d > most) most = d;
      }
      absMax = Math.max(absMax, most * Math.abs(p.scales[col * blocks + b]!));
    }
    c[col] = absMax > 0 ? Math.fround(absMax / LEVELS) : 1;
  }
  // Each block's 16 possible values, then the rows of a tile of columns.
  const table = new Int8Array(TILE * 16);
  const at = new Int32Array(TILE);
  for (let first = 0; first < n; first += TILE) {
    const cols = Math.min(TILE, n - first);
    for (let b = 0; b < blocks; b++) {
      for (let t = 0; t < cols; t++) {
        const col = first + t;
        const z = zero(col, b);
        const f = p.scales[col * blocks + b]! / c[col]!;
        for (let v = 0; v < 16; v++) {
          const x = Math.round((v - z) * f);
          table[t * 16 + v] = x > LEVELS ? LEVELS : x < -LEVELS ? -LEVELS : x;
        }
        at[t] = (col * blocks + b) * blob;
      }
      const rows = Math.min(blockSize, k - b * blockSize);
      for (let r = 0; r < rows; r += 2) {
        const even = (b * blockSize + r) * n + first;
        const half = r >> 1;
        for (let t = 0; t < cols; t++) w8[even + t] = table[(t << 4) | (q[at[t]! + half]! & 15)]!;
        if (r + 1 === rows) break;
        const odd = even + n;
        for (let t = 0; t < cols; t++) w8[odd + t] = table[(t << 4) | (q[at[t]! + half]! >> 4)]!;
      }
    }
  }
}

export interface RoundedRows {
  x8: string;
  rowScale: string;
}

/**
 * Writes the nodes that round each row of `input` to 8 bits (float16 input cast to float32 first),
 * named under `at`, reading the constants `roundingConstants` wrote under `constants`.
 */
export function roundRows(graph: Pieces, input: string, at: string, half: boolean, opset: number, constants = P): RoundedRows {
  const C = constants;
  const x = half ? `${at}float` : input;
  if (half) graph.bytesField(GRAPH_NODE, node('Cast', [input], x, [intAttribute('to', TensorType.FLOAT)]));
  graph.bytesField(GRAPH_NODE, node('Abs', [x], `${at}abs`));
  graph.bytesField(
    GRAPH_NODE,
    opset >= 18
      ? node('ReduceMax', [`${at}abs`, `${C}last_axis`], `${at}abs_max`, [intAttribute('keepdims', 1)])
      : node('ReduceMax', [`${at}abs`], `${at}abs_max`, [intsAttribute('axes', [-1]), intAttribute('keepdims', 1)]),
  );
  graph.bytesField(GRAPH_NODE, node('Mul', [`${at}abs_max`, `${C}inverse_levels`], `${at}scale_raw`));
  graph.bytesField(GRAPH_NODE, node('Max', [`${at}scale_raw`, `${C}tiny`], `${at}scale`));
  graph.bytesField(GRAPH_NODE, node('Div', [x, `${at}scale`], `${at}scaled`));
  // round half to even, + 128, as uint8: QuantizeLinear with scale 1 (x / 1 is x exactly; never saturates, |x / r| <= 127).
  graph.bytesField(GRAPH_NODE, node('QuantizeLinear', [`${at}scaled`, `${C}one`, `${C}zero_point`], `${at}x8`));
  return { x8: `${at}x8`, rowScale: `${at}scale` };
}

/**
 * Writes `y = float(x8 · w8 - 128 · Σ w8) · columns · r` for rows rounded by `roundRows`: the exact
 * int32 product scaled per column by com.microsoft MatMulIntegerToFloat (its A scale 1: it takes
 * no scale per row), then per row by a Mul. Two nodes where MatMulInteger, Cast and two Muls were
 * four: fewer for onnxruntime to create and to run (docs/benchmarks.md, "Fewer nodes for q4's projections").
 */
export function scaledProduct(graph: Pieces, rows: RoundedRows, w8: string, columns: string, y: string, at: string, constants = P): void {
  const C = constants;
  graph.bytesField(GRAPH_NODE, node('MatMulIntegerToFloat', [rows.x8, w8, `${C}one`, columns, `${C}zero_point`], `${at}columns_scaled`, [], 'com.microsoft'));
  graph.bytesField(GRAPH_NODE, node('Mul', [`${at}columns_scaled`, rows.rowScale], y));
}

/** Writes a projection's integer product, scaled back (and cast back to float16, and biased, where the original was), and its weights' initializers. */
function writeProduct(graph: Pieces, p: Projection, rows: RoundedRows, at: string): void {
  const y = p.node.outputs[0]!;
  const unbiased = p.bias ? `${at}unbiased` : y;
  scaledProduct(graph, rows, `${at}w8`, `${at}columns`, p.half ? `${at}product32` : unbiased, at);
  if (p.half) graph.bytesField(GRAPH_NODE, node('Cast', [`${at}product32`], unbiased, [intAttribute('to', TensorType.FLOAT16)]));
  if (p.bias) graph.bytesField(GRAPH_NODE, node('Add', [unbiased, p.bias], y));
  graph.bytesField(GRAPH_INITIALIZER, externalTensor(`${at}w8`, TensorType.INT8, [p.k, p.n], INT8_WEIGHTS, p.weightsAt, p.k * p.n));
  graph.bytesField(GRAPH_INITIALIZER, externalTensor(`${at}columns`, TensorType.FLOAT, [p.n], INT8_WEIGHTS, p.scalesAt, p.n * 4));
}

/** The constants `roundRows` and the integer products read, as initializers named under `prefix`. */
export function roundingConstants(graph: Pieces, opset: number, prefix: string): void {
  const scalar = (value: number) => new Uint8Array(Float32Array.of(value).buffer);
  graph.bytesField(GRAPH_INITIALIZER, rawTensor(`${prefix}inverse_levels`, TensorType.FLOAT, [], scalar(1 / LEVELS)));
  graph.bytesField(GRAPH_INITIALIZER, rawTensor(`${prefix}tiny`, TensorType.FLOAT, [], scalar(1e-30)));
  graph.bytesField(GRAPH_INITIALIZER, rawTensor(`${prefix}one`, TensorType.FLOAT, [], scalar(1)));
  graph.bytesField(GRAPH_INITIALIZER, rawTensor(`${prefix}zero_point`, TensorType.UINT8, [], Uint8Array.of(128)));
  if (opset >= 18) graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${prefix}last_axis`, [-1n]));
}

/**
 * `model` with its MatMulNBits rewritten to 8-bit integer products, reading the weights of
 * external-data initializers through `external` (a mounted file's bytes by its location); null
 * when it has none this can rewrite (or an operator set older than 11, which these rewrites leave alone).
 */
export function int8Projections(model: Uint8Array, external: ExternalData): Int8Rewrite | null {
  const opset = defaultOpset(model);
  const read = opset < 11 ? null : readGraph(model, external);
  if (!read) return null;
  const { tensors, nodes, initializers } = read;
  // An initializer listed among the graph's inputs too (IR < 4) is read from outside: kept.
  const readers = new Map(read.readers);
  for (const input of read.inputs) readers.set(input.name, Infinity);

  // Lay out the new buffer: each projection's int8 weights, then its column scales.
  const projections = new Map<NodeInfo, Projection>();
  let size = 0;
  for (const n of nodes.values()) {
    const p = projectionOf(n, tensors);
    if (!p) continue;
    const weightsAt = align(size);
    const scalesAt = align(weightsAt + p.k * p.n);
    size = scalesAt + p.n * 4;
    projections.set(n, { ...p, weightsAt, scalesAt });
  }
  if (projections.size === 0) return null;
  const weights = new Uint8Array(size);
  for (const p of projections.values()) {
    requantize(p, new Int8Array(weights.buffer, p.weightsAt, p.k * p.n), new Float32Array(weights.buffer, p.scalesAt, p.n));
  }

  // What only the rewritten nodes read goes.
  const uses = new Map<string, number>();
  for (const p of projections.values()) for (const i of p.node.inputs.slice(1, 4)) if (i) uses.set(i, (uses.get(i) ?? 0) + 1);
  const dropped = new Set([...uses].filter(([name, count]) => readers.get(name) === count).map(([name]) => name));

  const graph = new Pieces();
  const rounded = new Map<string, RoundedRows>();
  let index = 0;
  for (const f of read.fields) {
    if (dropped.has(initializers.get(f) ?? '')) continue;
    const n = f.number === GRAPH_NODE && f.wire === WIRE_BYTES ? nodes.get(f) : undefined;
    const p = n && projections.get(n);
    if (!p) {
      graph.push(model.subarray(f.start, f.end));
      continue;
    }
    // The rows of an input shared by several projections are rounded once, before the first.
    const input = p.node.inputs[0]!;
    let rows = rounded.get(input);
    if (!rows) rounded.set(input, (rows = roundRows(graph, input, `${P}x${rounded.size}/`, p.half, opset)));
    writeProduct(graph, p, rows, `${P}p${index++}/`);
  }
  roundingConstants(graph, opset, P);

  return { graph: withGraph(model, read.field, graph), weights, projections: projections.size };
}
