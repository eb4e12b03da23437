/**
 * The lm_head of a graph: the product its `logits` come from, through Reshapes and operations that
 * act on each row of the logits alone (logits-to-keep.ts recognises the same). The head rewrites
 * (int8-head.ts, tied-head.ts) find it here.
 */
import type { NodeInfo } from './onnx-messages.ts';

/** Operations that act on each row of the logits alone, and the Reshapes around the product. */
const BETWEEN = new Set(['Reshape', 'Cast', 'Mul', 'Div', 'Add', 'Sub', 'Tanh', 'Softcap']);

/** The node the graph's `logits` come from, past at most 16 row-wise operations; null where there is none. */
export function lmHeadNode(nodes: Iterable<NodeInfo>): NodeInfo | null {
  const producer = new Map<string, NodeInfo>();
  for (const n of nodes) for (const o of n.outputs) producer.set(o, n);
  let at = producer.get('logits');
  for (let i = 0; at && BETWEEN.has(at.op) && i < 16; i++) at = producer.get(at.inputs[0] ?? '');
  return at ?? null;
}

/** A Gemm of the default domain that is x · Bᵀ and nothing more: transB = 1, no transA, alpha, beta or bias. */
export function isPlainTransBGemm(n: NodeInfo): boolean {
  return n.domain === '' && n.op === 'Gemm' && (n.ints.get('transB') ?? 0) === 1 && (n.ints.get('transA') ?? 0) === 0 && !n.attributes.has('alpha') && !n.attributes.has('beta') && !n.inputs[2];
}
