/**
 * The lm_head, and a tied token embedding, taken out of the graph, for the engine's own kernel.
 *
 * int8-head.ts gives onnxruntime both readers of the vocabulary matrix at 8 bits, the lm_head as
 * `MatMulInteger`, which onnxruntime-web's wasm build runs slowly at one row (docs/memory.md). Here
 * the graph computes neither: `kernelHead` rewrites it so that
 *
 *   - the lm_head's input, the hidden state [.., H] (already sliced to the rows asked for by
 *     logits-to-keep.ts), is a graph output `hidden`, in place of `logits`; the product and the
 *     Reshapes to `logits` go, with the shape arithmetic only they read;
 *   - where the embedding's `Gather(E, input_ids)` reads the lm_head's own matrix (a tied head:
 *     `Gemm(x, E, transB = 1)`), the Gather goes too, and its output becomes a graph input `embeds`
 *     that the engine feeds;
 *   - the float matrix goes where nothing else reads it.
 *
 * The matrix is quantized into the kernel's memory (`into`), [V, Hp] with a scale per vocabulary
 * row, exactly as int8-head.ts quantizes it (`quantizeRows`): the engine then computes the same
 * embedding rows and the same logits (int8-head-kernel.ts). Only float32 heads are taken, and only
 * where `logits` is the product through Reshapes alone; any other graph is left to int8-head.ts
 * (null). An untied embedding stays in the graph for int8-head.ts to rewrite.
 */
import { quantizeRows } from './int8-head.ts';
import { isPlainTransBGemm } from './lm-head.ts';
import { readGraph, type ExternalData, type TensorInfo } from './onnx-graph.ts';
import { GRAPH_INITIALIZER, GRAPH_INPUT, GRAPH_NODE, GRAPH_OUTPUT, type NodeInfo, TensorType, tensorValue, withGraph } from './onnx-messages.ts';
import { Pieces, WIRE_BYTES } from './onnx-wire.ts';

/** Where the quantized matrix goes: Q [V, hp] and s [V] for a matrix of V rows of H values; null: nowhere (the rewrite is not made). */
export type HeadTarget = (v: number, h: number) => { q: Int8Array; s: Float32Array; hp: number } | null;

export interface KernelHeadRewrite {
  graph: Uint8Array;
  /** The graph output that replaces `logits`: the lm_head's input, [.., H] float32. */
  hidden: string;
  /** The graph input that replaces the embedding's Gather, [batch, n, H] float32; null where the embedding stayed in the graph. */
  embeds: string | null;
  v: number;
  h: number;
  /** Bytes of the float matrix the graph no longer holds (0 where something else still reads it), and of the int8 one with its scales. */
  droppedBytes: number;
  int8Bytes: number;
}

/** Nodes that may hang off the lm_head's output besides the Reshapes to `logits`: shape arithmetic, which goes with it. */
const SHAPE_ONLY = new Set(['Reshape', 'Shape', 'Slice', 'Concat', 'Gather', 'Unsqueeze', 'Squeeze', 'Identity']);
const SUBGRAPHS = new Set(['If', 'Loop', 'Scan']);


const isFloat32Matrix = (t: TensorInfo | undefined): t is TensorInfo & { data: Uint8Array } =>
  !!t && t.type === TensorType.FLOAT && t.dims.length === 2 && t.data !== null && t.data.length === t.dims[0]! * t.dims[1]! * 4;

/**
 * `model` without its lm_head (and tied embedding), the matrix quantized into `into`'s arrays;
 * weights of external-data initializers read through `external`. Null where the graph is not one
 * this takes (above), or `into` gives no target.
 */
export function kernelHead(model: Uint8Array, external: ExternalData, into: HeadTarget): KernelHeadRewrite | null {
  const read = readGraph(model, external);
  if (!read || !read.outputs.some((o) => o.name === 'logits')) return null;
  const { tensors, nodes } = read;
  // A subgraph may read outer values no node lists as its input: such a graph is not pruned here.
  for (const n of nodes.values()) if (SUBGRAPHS.has(n.op)) return null;
  const inputs = new Set(read.inputs.map((i) => i.name));
  const producer = new Map<string, NodeInfo>();
  for (const n of nodes.values()) for (const o of n.outputs) producer.set(o, n);

  // `logits` = Reshape*(product): the product is the head.
  let head = producer.get('logits');
  for (let i = 0; head?.op === 'Reshape' && i < 16; i++) head = producer.get(head.inputs[0] ?? '');
  if (!head || head.domain !== '') return null;
  const rowsFirst = isPlainTransBGemm(head);
  if (!rowsFirst && !(head.op === 'MatMul' && head.inputs.length === 2)) return null;
  const matrixName = head.inputs[1]!;
  const matrix = tensors.get(matrixName);
  if (!isFloat32Matrix(matrix) || inputs.has(matrixName)) return null;
  const [v, h] = rowsFirst ? [matrix.dims[0]!, matrix.dims[1]!] : [matrix.dims[1]!, matrix.dims[0]!];
  const hidden = head.inputs[0]!;

  // Everything downstream of the product goes: it must be the way to `logits` and shape arithmetic only.
  const gone = new Set<NodeInfo>([head]);
  const goneValues = new Set(head.outputs);
  for (const n of nodes.values()) {
    if (gone.has(n) || !n.inputs.some((i) => goneValues.has(i))) continue;
    if (!SHAPE_ONLY.has(n.op) || n.domain !== '') return null;
    gone.add(n);
    for (const o of n.outputs) goneValues.add(o);
  }
  if (read.outputs.some((o) => o.name !== 'logits' && goneValues.has(o.name)) || !goneValues.has('logits')) return null;

  // A tied embedding: Gather(E, input_ids) along axis 0 of the head's own [V, H] matrix.
  let embedding: NodeInfo | null = null;
  if (rowsFirst) {
    for (const n of nodes.values()) {
      if (n.op === 'Gather' && n.domain === '' && n.inputs[0] === matrixName && n.inputs[1] === 'input_ids' && (n.ints.get('axis') ?? 0) === 0 && inputs.has('input_ids')) {
        embedding = n;
        break;
      }
    }
  }
  if (embedding) gone.add(embedding);

  // What is left computes nothing the outputs need: the shape arithmetic only the removed Reshapes read.
  const live = new Set(read.outputs.filter((o) => o.name !== 'logits').map((o) => o.name));
  live.add(hidden);
  const kept = new Set<NodeInfo>();
  for (const n of [...nodes.values()].reverse()) {
    if (gone.has(n) || !n.outputs.some((o) => live.has(o))) continue;
    kept.add(n);
    for (const i of n.inputs) live.add(i);
  }

  const target = into(v, h);
  if (!target) return null;
  quantizeRows(matrix.data, v, h, rowsFirst, false, target.q, target.s, target.hp);

  // Initializers only removed nodes read go (one listed among the graph's inputs too is fed from outside: kept).
  const unread = (name: string) => !live.has(name) && (read.readers.get(name) ?? 0) > 0 && !inputs.has(name);
  const dropped = unread(matrixName);
  const graph = new Pieces();
  for (const f of read.fields) {
    if (f.wire === WIRE_BYTES && f.number === GRAPH_NODE && !kept.has(nodes.get(f)!)) continue;
    if (f.wire === WIRE_BYTES && f.number === GRAPH_INITIALIZER && unread(read.initializers.get(f) ?? '')) continue;
    if (f.wire === WIRE_BYTES && f.number === GRAPH_OUTPUT && read.outputs.find((o) => o.field === f)?.name === 'logits') {
      graph.bytesField(GRAPH_OUTPUT, tensorValue(hidden, TensorType.FLOAT, 'unknown'));
      continue;
    }
    graph.push(model.subarray(f.start, f.end));
  }
  const embeds = embedding ? embedding.outputs[0]! : null;
  // The embeddings fed in place of the Gather have its shape, the ids' and the hidden size (what the graph's shapes are followed from: symbolic-shapes.ts).
  const ids = read.inputs.find((i) => i.name === 'input_ids')?.dims;
  const shape = ids && ids.every((d) => d !== null) ? [...(ids as (number | string)[]), h] : 'unknown';
  if (embeds) graph.bytesField(GRAPH_INPUT, tensorValue(embeds, TensorType.FLOAT, shape));
  return { graph: withGraph(model, read.field, graph), hidden, embeds, v, h, droppedBytes: dropped ? matrix.data.length : 0, int8Bytes: v * h + v * 4 };
}
