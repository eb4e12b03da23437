/**
 * A tied float32 embedding and lm_head held once in onnxruntime's wasm heap, not twice.
 *
 * A tied export reads one float32 matrix E [V, H] twice: the embedding's `Gather(E, input_ids)`
 * and the lm_head's `Gemm(x, E, transB = 1)`. onnxruntime's CPU Gemm and MatMul pack a constant
 * two-dimensional B into a second copy at session creation (its `PrePack`), and the Gather keeps
 * the original: for the 135M-shaped model, 113 MiB of matrix and 108 MiB packed (docs/memory.md).
 * The int8 head (int8-head.ts) removes both, at 8 bits; at fp32, which stays exact by default,
 * this rewrite removes the packed copy instead:
 *
 *   weights     W [1, H, V] = Eᵀ, float32, one buffer (three-dimensional: onnxruntime packs a
 *               two-dimensional B only, so W is read where it lies, packed a tile at a time)
 *   embedding   y = Transpose(Squeeze(Gather(W, ids, axis 2), 0)), the hidden axis last
 *   lm_head     Reshape(MatMul(x, W), [-1, V])  (x [N, H] → [1, N, V] → [N, V], the Gemm's shape)
 *
 * The embedding rows are E's values exactly; the logits are the same float32 products, summed in
 * the order onnxruntime's kernel sums them (test/engine/tied-head.test.ts compares both with the
 * graph as exported). The cost is the tile packing on each call, which a one-row decode step pays
 * on the lm_head only (docs/memory.md gives the measured decode rate).
 *
 * Only the tied float32 form is rewritten: a Gemm with transB = 1 and no alpha, beta or bias,
 * whose B is the initializer a `Gather(·, input_ids)` along axis 0 reads too, and which nothing
 * else reads. An untied lm_head has no such twin: onnxruntime frees a matrix it packed when the
 * packing node was its only reader.
 *
 * W is one new buffer, mounted as external data `TIED_HEAD_WEIGHTS`.
 */
import { isPlainTransBGemm, lmHeadNode } from './lm-head.ts';
import { defaultOpset, readGraph, type ExternalData, type TensorInfo } from './onnx-graph.ts';
import { externalTensor, GRAPH_INITIALIZER, GRAPH_NODE, int64Tensor, intAttribute, intsAttribute, node, type NodeInfo, TensorType, withGraph } from './onnx-messages.ts';
import { Pieces, WIRE_BYTES } from './onnx-wire.ts';

/** The name under which the transposed matrix is mounted as external data (a key of onnxruntime-web's mount table, not a file). */
export const TIED_HEAD_WEIGHTS = 'jev-tied-head';

const P = 'jev_tied_head/';

export interface TiedHeadRewrite {
  graph: Uint8Array;
  /** The external data `TIED_HEAD_WEIGHTS`: Eᵀ, float32 [H, V]. */
  weights: Uint8Array;
  /** The packed copy onnxruntime no longer makes: V × H float32 values. */
  packedBytesAvoided: number;
}

/**
 * Writes Eᵀ ([H, V]) of a float32 matrix E [V, H] given as bytes (any alignment) into `out`, a
 * block of rows at a time, so that the reads of each block stay in cache.
 */
export function transposeRows(data: Uint8Array, v: number, h: number, out: Float32Array): void {
  const rows = Math.max(1, Math.floor((256 << 10) / (h * 4)));
  for (let first = 0; first < v; first += rows) {
    const count = Math.min(rows, v - first);
    const e = new Float32Array(data.slice(first * h * 4, (first + count) * h * 4).buffer);
    for (let k = 0; k < h; k++) {
      const base = k * v + first;
      for (let r = 0; r < count; r++) out[base + r] = e[r * h + k]!;
    }
  }
}

const isFloatMatrix = (t: TensorInfo | undefined): t is TensorInfo & { data: Uint8Array } =>
  !!t && t.type === TensorType.FLOAT && t.dims.length === 2 && t.data !== null && t.data.length === t.dims[0]! * t.dims[1]! * 4;

/**
 * `model` with its tied float32 embedding and lm_head reading one transposed matrix that
 * onnxruntime does not pack; weights of external-data initializers are read through `external`.
 * Null when the graph has no such pair (or an operator set older than 11).
 */
export function tiedHead(model: Uint8Array, external: ExternalData): TiedHeadRewrite | null {
  const opset = defaultOpset(model);
  const read = opset < 11 ? null : readGraph(model, external);
  if (!read) return null;
  const { tensors, nodes } = read;
  const inputs = new Map(read.inputs.map((i) => [i.name, i]));

  // The lm_head: the product `logits` come from (lm-head.ts), x · Eᵀ and nothing more.
  const head = lmHeadNode(nodes.values());
  if (!head || !isPlainTransBGemm(head)) return null;
  const name = head.inputs[1]!;
  const matrix = tensors.get(name);
  if (inputs.has(name) || !isFloatMatrix(matrix)) return null;
  // The embedding: Gather(E, input_ids) along axis 0, ids of a known rank, the matrix's only other reader.
  const ids = inputs.get('input_ids');
  let embedding: NodeInfo | null = null;
  for (const n of nodes.values()) {
    if (n.op === 'Gather' && n.domain === '' && n.inputs[0] === name && n.inputs[1] === 'input_ids' && (n.ints.get('axis') ?? 0) === 0) embedding = n;
  }
  if (!embedding || !ids?.rank || read.readers.get(name) !== 2) return null;

  const [v, h] = [matrix.dims[0]!, matrix.dims[1]!];
  const weights = new Uint8Array(v * h * 4);
  transposeRows(matrix.data, v, h, new Float32Array(weights.buffer));

  const w = `${P}weights`;
  const graph = new Pieces();
  for (const f of read.fields) {
    if (read.initializers.get(f) === name) continue;
    const n = f.number === GRAPH_NODE && f.wire === WIRE_BYTES ? nodes.get(f) : undefined;
    if (n && n === embedding) {
      const e = `${P}embedding/`;
      graph.bytesField(GRAPH_NODE, node('Gather', [w, n.inputs[1]!], `${e}columns`, [intAttribute('axis', 2)]));
      // [1, H, ids…] → [H, ids…]: Squeeze takes its axes as an input from opset 13.
      if (opset >= 13) graph.bytesField(GRAPH_NODE, node('Squeeze', [`${e}columns`, `${P}first_axis`], `${e}squeezed`));
      else graph.bytesField(GRAPH_NODE, node('Squeeze', [`${e}columns`], `${e}squeezed`, [intsAttribute('axes', [0])]));
      const perm = [...Array.from({ length: ids.rank }, (_, i) => i + 1), 0];
      graph.bytesField(GRAPH_NODE, node('Transpose', [`${e}squeezed`], n.outputs[0]!, [intsAttribute('perm', perm)]));
    } else if (n && n === head) {
      const a = `${P}head/`;
      graph.bytesField(GRAPH_NODE, node('MatMul', [n.inputs[0]!, w], `${a}product`));
      graph.bytesField(GRAPH_NODE, node('Reshape', [`${a}product`, `${P}rows_shape`], n.outputs[0]!));
    } else graph.push(model.subarray(f.start, f.end));
  }
  graph.bytesField(GRAPH_INITIALIZER, externalTensor(w, TensorType.FLOAT, [1, h, v], TIED_HEAD_WEIGHTS, 0, weights.length));
  graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${P}rows_shape`, [-1n, BigInt(v)]));
  if (opset >= 13) graph.bytesField(GRAPH_INITIALIZER, int64Tensor(`${P}first_axis`, [0n]));
  return { graph: withGraph(model, read.field, graph), weights, packedBytesAvoided: v * h * 4 };
}
