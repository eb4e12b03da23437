import { readGraph } from './onnx-graph.ts';

/**
 * Fused attention operators: onnxruntime's (domain com.microsoft), and ONNX's own Attention
 * (opset 23). Their WebGPU kernels are where a long pass has been computed wrongly
 * (GroupQueryAttention, load-model.ts `passLimit`); graphs of standard operators compute attention
 * from MatMul, Softmax and the like, which agree at any length.
 */
const FUSED_ATTENTION = new Set(['GroupQueryAttention', 'MultiHeadAttention', 'Attention', 'PackedAttention', 'PackedMultiHeadAttention', 'SparseAttention', 'PagedAttention', 'DecoderMaskedMultiHeadAttention']);

/** The fused attention operators a graph's nodes use (empty where none), or null where the graph cannot be read. */
export function fusedAttentionOps(model: Uint8Array): string[] | null {
  let graph: ReturnType<typeof readGraph>;
  try {
    graph = readGraph(model);
  } catch {
    return null; // not a model this reads: onnxruntime says what is wrong with it
  }
  if (!graph) return null;
  const ops = new Set<string>();
  for (const node of graph.nodes.values()) if (FUSED_ATTENTION.has(node.op)) ops.add(node.op);
  return [...ops];
}
