/**
 * The token embedding and the lm_head at 8 bits, from one int8 copy with a scale per vocabulary row.
 *
 * The hub's q4 and q8 exports (and this project's generated ones) keep the embedding matrix
 * E [V, H] in float32 (float16 in q4f16/fp16), read twice when it is tied: by the embedding's
 * `Gather(E, input_ids)` and by the lm_head's `Gemm(x, E, transB = 1)`, whose B onnxruntime packs
 * into a second float32 copy. For the 135M-shaped model that is 113 MiB of file and 108 MiB more
 * packed (docs/memory.md). llama.cpp keeps the same matrix at 4 or 8 bits.
 *
 * `int8Head` rewrites, at load, both readers to read one int8 matrix:
 *
 *   weights     Q[h, v] = round(E[v, h] / s[v]),   s[v] = max_h |E[v, h]| / 127
 *               (int8 [H, V], the layout MatMulInteger reads as B; one float32 scale per token)
 *   embedding   y[..., h] = float(Gather(Q, ids, axis 1))[h, ...] · Gather(s, ids)[...]
 *               (a Transpose brings the hidden axis last; cast to float16 where the graph was)
 *   lm_head     the product of int8-projections.ts: each row of x rounded to 255 levels,
 *               MatMulIntegerToFloat(x8, Q, 1, s, 128) · r
 *
 * An untied lm_head, `MatMul(x, W)` with W [H, V] a float initializer, is rewritten the same way
 * with its own matrix (scales per column of W). The lm_head is the product the graph's `logits`
 * come from, through Reshapes and row-wise operations (logits-to-keep.ts recognises the same).
 * An embedding row is exact to ±s[v]/2 per value; the logits carry the error of the 8-bit product
 * (docs/models.md gives the measured drift). The float initializers the rewritten nodes alone read
 * are dropped: no float copy of the matrix is left in the graph, and so none in onnxruntime.
 *
 * The int8 matrices and scales are one new buffer, mounted as external data `INT8_HEAD_WEIGHTS`.
 */
import { decodeFloat16Bits } from '../runtime/float16.ts';
import { roundingConstants, roundRows, scaledProduct } from './int8-projections.ts';
import { isPlainTransBGemm, lmHeadNode } from './lm-head.ts';
import { defaultOpset, readGraph, type ExternalData, type TensorInfo } from './onnx-graph.ts';
import { externalTensor, GRAPH_INITIALIZER, GRAPH_NODE, intAttribute, intsAttribute, node, type NodeInfo, TensorType, withGraph } from './onnx-messages.ts';
import { Pieces, WIRE_BYTES } from './onnx-wire.ts';

/** The name under which the rewritten matrices are mounted as external data (a key of onnxruntime-web's mount table, not a file). */
export const INT8_HEAD_WEIGHTS = 'jev-int8-head';

const LEVELS = 127;
const ALIGN = 64;
const P = 'jev_int8_head/';

export interface Int8HeadRewrite {
  graph: Uint8Array;
  /** The external data `INT8_HEAD_WEIGHTS`: each matrix's int8 values, then its scales. */
  weights: Uint8Array;
  /** Whether the embedding's Gather, and the lm_head's product, were rewritten. */
  embedding: boolean;
  head: boolean;
  /** Bytes of float matrices the graph no longer holds, and of the int8 ones (with their scales) that replace them. */
  droppedBytes: number;
  int8Bytes: number;
}

/** A matrix of V vocabulary rows of H values: the initializer, and which way round it is stored. */
interface Matrix {
  name: string;
  tensor: TensorInfo & { data: Uint8Array };
  /** true: [V, H] (an embedding; a Gemm's B with transB); false: [H, V] (a MatMul's B). */
  rowsFirst: boolean;
  v: number;
  h: number;
  half: boolean;
  index: number;
  weightsAt: number;
  scalesAt: number;
}

const isFloat = (t: TensorInfo | undefined): t is TensorInfo & { data: Uint8Array } =>
  !!t && (t.type === TensorType.FLOAT || t.type === TensorType.FLOAT16) && t.dims.length === 2 && t.data !== null && t.data.length === t.dims[0]! * t.dims[1]! * (t.type === TensorType.FLOAT ? 4 : 2);

/**
 * Writes Q (int8 [H, V]) and s (float32 [V]) of a float matrix given as [V, H] (`rowsFirst`) or
 * [H, V]: s[v] = max |row v| / 127 (1 for a row of zeros), Q = round(value / s[v]). With `stride`,
 * Q is written [V, stride] instead, a vocabulary row at v · stride (the engine's kernel's layout,
 * int8-head-kernel.ts; values past H are left as they are).
 */
export function quantizeRows(data: Uint8Array, v: number, h: number, rowsFirst: boolean, half: boolean, q: Int8Array, s: Float32Array, stride?: number): void {
  const at = stride === undefined ? (row: number, k: number) => k * v + row : (row: number, k: number) => row * stride + k;
  // Decoded in chunks of `rows` rows of the stored layout, so a float16 matrix is never float32 whole.
  const stored = rowsFirst ? v : h;
  const width = rowsFirst ? h : v;
  const rows = Math.max(1, Math.floor((1 << 20) / width));
  const chunk = (first: number, count: number): Float32Array => {
    const bytes = half ? 2 : 4;
    const raw = data.slice(first * width * bytes, (first + count) * width * bytes);
    return half ? decodeFloat16Bits(new Uint16Array(raw.buffer)) : new Float32Array(raw.buffer);
  };
  if (rowsFirst) {
    for (let first = 0; first < stored; first += rows) {
      const count = Math.min(rows, stored - first);
      const e = chunk(first, count);
      for (let r = 0; r < count; r++) {
        const row = first + r;
        let most = 0;
        for (let k = 0; k < h; k++) most = Math.max(most, Math.abs(e[r * h + k]!));
        const scale = most > 0 ? Math.fround(most / LEVELS) : 1;
        s[row] = scale;
        for (let k = 0; k < h; k++) q[at(row, k)] = clamp(Math.round(e[r * h + k]! / scale));
      }
    }
    return;
  }
  // [H, V]: the scales (column maxima) first, then the values.
  const most = new Float32Array(v);
  for (let first = 0; first < stored; first += rows) {
    const count = Math.min(rows, stored - first);
    const w = chunk(first, count);
    for (let i = 0; i < count * v; i++) {
      const a = Math.abs(w[i]!);
      const col = i % v;
      if (a > most[col]!) most[col] = a;
    }
  }
  for (let col = 0; col < v; col++) s[col] = most[col]! > 0 ? Math.fround(most[col]! / LEVELS) : 1;
  for (let first = 0; first < stored; first += rows) {
    const count = Math.min(rows, stored - first);
    const w = chunk(first, count);
    for (let i = 0; i < count * v; i++) q[at(i % v, first + Math.floor(i / v))] = clamp(Math.round(w[i]! / s[i % v]!));
  }
}

const clamp = (x: number) => (x > LEVELS ? LEVELS : x < -LEVELS ? -LEVELS : x);

/**
 * `model` with its embedding Gather and lm_head product reading 8-bit matrices; weights of
 * external-data initializers are read through `external`. Null when it has neither in a form this
 * recognises (or an operator set older than 11, which these rewrites leave alone).
 */
export function int8Head(model: Uint8Array, external: ExternalData): Int8HeadRewrite | null {
  const opset = defaultOpset(model);
  const read = opset < 11 ? null : readGraph(model, external);
  if (!read) return null;
  const { tensors, nodes } = read;
  const inputs = new Map(read.inputs.map((i) => [i.name, i]));

  const matrices = new Map<string, Matrix>();
  const matrixOf = (name: string, rowsFirst: boolean): Matrix | null => {
    const tensor = tensors.get(name);
    if (!isFloat(tensor) || inputs.has(name)) return null;
    const [v, h] = rowsFirst ? [tensor.dims[0]!, tensor.dims[1]!] : [tensor.dims[1]!, tensor.dims[0]!];
    const known = matrices.get(name);
    if (known) return known.rowsFirst === rowsFirst ? known : null;
    const m: Matrix = { name, tensor, rowsFirst, v, h, half: tensor.type === TensorType.FLOAT16, index: matrices.size, weightsAt: 0, scalesAt: 0 };
    matrices.set(name, m);
    return m;
  };

  // The lm_head: the product `logits` come from, through Reshapes and row-wise operations.
  let head: { node: NodeInfo; matrix: Matrix } | null = null;
  const at = lmHeadNode(nodes.values());
  if (at && at.domain === '' && at.op === 'Gemm') {
    const m = isPlainTransBGemm(at) ? matrixOf(at.inputs[1]!, true) : null;
    if (m) head = { node: at, matrix: m };
  } else if (at && at.domain === '' && at.op === 'MatMul') {
    const m = matrixOf(at.inputs[1]!, false);
    if (m) head = { node: at, matrix: m };
  }
  // The embedding: Gather(E [V, H], input_ids) along axis 0, ids of a known rank.
  let embedding: { node: NodeInfo; matrix: Matrix; rank: number } | null = null;
  const ids = inputs.get('input_ids');
  for (const n of nodes.values()) {
    if (!ids?.rank || n.op !== 'Gather' || n.domain !== '' || n.inputs[1] !== 'input_ids' || (n.ints.get('axis') ?? 0) !== 0) continue;
    const m = matrixOf(n.inputs[0]!, true);
    if (m) embedding = { node: n, matrix: m, rank: ids.rank };
    break;
  }
  if (!head && !embedding) return null;
  // A matrix found for a reader that is not rewritten after all is not made.
  for (const [name, m] of matrices) if (head?.matrix !== m && embedding?.matrix !== m) matrices.delete(name);

  let size = 0;
  for (const m of matrices.values()) {
    m.weightsAt = Math.ceil(size / ALIGN) * ALIGN;
    m.scalesAt = Math.ceil((m.weightsAt + m.v * m.h) / ALIGN) * ALIGN;
    size = m.scalesAt + m.v * 4;
  }
  const weights = new Uint8Array(size);
  for (const m of matrices.values()) {
    quantizeRows(m.tensor.data, m.v, m.h, m.rowsFirst, m.half, new Int8Array(weights.buffer, m.weightsAt, m.v * m.h), new Float32Array(weights.buffer, m.scalesAt, m.v));
  }

  // The float matrices only the rewritten nodes read go.
  const rewritten = [head, embedding].filter((r) => r !== null);
  const dropped = new Set<string>();
  let droppedBytes = 0;
  for (const m of matrices.values()) {
    const uses = rewritten.filter((r) => r.matrix === m).length;
    if (read.readers.get(m.name) === uses) {
      dropped.add(m.name);
      droppedBytes += m.tensor.data.length;
    }
  }

  const q = (m: Matrix) => `${P}m${m.index}/q`;
  const s = (m: Matrix) => `${P}m${m.index}/scales`;
  const graph = new Pieces();
  for (const f of read.fields) {
    if (dropped.has(read.initializers.get(f) ?? '')) continue;
    const n = f.number === GRAPH_NODE && f.wire === WIRE_BYTES ? nodes.get(f) : undefined;
    if (n && n === embedding?.node) {
      const { matrix: m, rank } = embedding;
      const e = `${P}embedding/`;
      const y = n.outputs[0]!;
      graph.bytesField(GRAPH_NODE, node('Gather', [q(m), n.inputs[1]!], `${e}q`, [intAttribute('axis', 1)]));
      graph.bytesField(GRAPH_NODE, node('Cast', [`${e}q`], `${e}float`, [intAttribute('to', TensorType.FLOAT)]));
      graph.bytesField(GRAPH_NODE, node('Gather', [s(m), n.inputs[1]!], `${e}scales`, [intAttribute('axis', 0)]));
      graph.bytesField(GRAPH_NODE, node('Mul', [`${e}float`, `${e}scales`], `${e}rows`));
      const perm = [...Array.from({ length: rank }, (_, i) => i + 1), 0];
      graph.bytesField(GRAPH_NODE, node('Transpose', [`${e}rows`], m.half ? `${e}rows32` : y, [intsAttribute('perm', perm)]));
      if (m.half) graph.bytesField(GRAPH_NODE, node('Cast', [`${e}rows32`], y, [intAttribute('to', TensorType.FLOAT16)]));
    } else if (n && n === head?.node) {
      const { matrix: m } = head;
      const a = `${P}head/`;
      const y = n.outputs[0]!;
      const rows = roundRows(graph, n.inputs[0]!, `${a}x/`, m.half, opset, P);
      scaledProduct(graph, rows, q(m), s(m), m.half ? `${a}logits32` : y, a, P);
      if (m.half) graph.bytesField(GRAPH_NODE, node('Cast', [`${a}logits32`], y, [intAttribute('to', TensorType.FLOAT16)]));
    } else graph.push(model.subarray(f.start, f.end));
  }
  for (const m of matrices.values()) {
    graph.bytesField(GRAPH_INITIALIZER, externalTensor(q(m), TensorType.INT8, [m.h, m.v], INT8_HEAD_WEIGHTS, m.weightsAt, m.v * m.h));
    graph.bytesField(GRAPH_INITIALIZER, externalTensor(s(m), TensorType.FLOAT, [m.v], INT8_HEAD_WEIGHTS, m.scalesAt, m.v * 4));
  }
  if (head) roundingConstants(graph, opset, P);

  const int8Bytes = [...matrices.values()].reduce((sum, m) => sum + m.v * m.h + m.v * 4, 0);
  return { graph: withGraph(model, read.field, graph), weights, embedding: !!embedding, head: !!head, droppedBytes, int8Bytes };
}
