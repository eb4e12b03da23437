/**
 * The lm_head as an 8-bit MatMulNBits, on onnxruntime's native CPU kernels (Node).
 *
 * This project's q4 exports keep the lm_head in float32 (a tied `Gemm(x, embed_tokens, transB)`:
 * 49,152 × 576 floats, 113 MB read for every decoded token), where llama.cpp's Q4_0 file carries
 * it quantized. `withNbitsHead` replaces that product by `MatMulNBits(x, Wq, scales)` with 8 bits
 * in blocks of 32 along K (symmetric: scale = max |w| / 127 per block, zero point 128, as
 * MatMulNBits' default) and `accuracy_level` 4 (int8 activations: int8-accuracy.ts), the int8
 * weights and scales written inline as initializers. The float matrix stays where something else
 * reads it (a tied embedding's Gather), else it leaves the graph. Measured on the 135M-shaped q4
 * model (1 thread, a decode step at 400 tokens of context, onnxruntime-node 1.30.0): 54.7 -> 41.1 ms.
 *
 * Made only for graphs that already hold MatMulNBits (q4, q4f16: the com.microsoft domain is
 * imported, and the format is already approximate); a float32 graph stays exact. Null where the
 * head is not a plain float32 product by an initializer whose K is a multiple of 32, or where its
 * weights are external data that `external` does not give.
 */
import { isPlainTransBGemm, lmHeadNode } from './lm-head.ts';
import { GRAPH_INITIALIZER, GRAPH_NODE, intAttribute, node, rawTensor, TensorType, withGraph } from './onnx-messages.ts';
import { readGraph, type ExternalData } from './onnx-graph.ts';
import { Pieces } from './onnx-wire.ts';

const BLOCK = 32;
const P = 'jev_nbits_head/';

export function withNbitsHead(model: Uint8Array, external: ExternalData = () => null): { graph: Uint8Array; bytes: number } | null {
  const g = readGraph(model, external);
  if (!g) return null;
  if (![...g.nodes.values()].some((n) => n.op === 'MatMulNBits')) return null;
  const head = lmHeadNode(g.nodes.values());
  if (!head) return null;
  const transposed = isPlainTransBGemm(head);
  if (!transposed && !(head.domain === '' && head.op === 'MatMul')) return null;
  const weight = g.tensors.get(head.inputs[1] ?? '');
  if (!weight || weight.type !== TensorType.FLOAT || weight.dims.length !== 2 || !weight.data) return null;
  // Gemm(transB): W is [N, K]; MatMul: W is [K, N].
  const [N, K] = transposed ? [weight.dims[0]!, weight.dims[1]!] : [weight.dims[1]!, weight.dims[0]!];
  if (K % BLOCK !== 0) return null;
  const source = new Float32Array(weight.data.buffer.slice(weight.data.byteOffset, weight.data.byteOffset + weight.data.byteLength));
  // Rows of the product's [N, K] matrix, contiguous (a MatMul's [K, N] weight transposed once).
  const w = transposed ? source : transpose(source, K, N);
  const blocks = K / BLOCK;
  const q = new Uint8Array(N * K);
  const scales = new Float32Array(N * blocks);
  for (let b = 0, off = 0; b < N * blocks; b++, off += BLOCK) {
    let max = 0;
    for (let i = off; i < off + BLOCK; i++) {
      const a = Math.abs(w[i]!);
      if (a > max) max = a;
    }
    const scale = max > 0 ? max / 127 : 1;
    const inv = 1 / scale;
    scales[b] = scale;
    for (let i = off; i < off + BLOCK; i++) q[i] = Math.round(w[i]! * inv) + 128; // |w| ≤ max: within ±127 (±127.0000x rounds to 127)
  }
  const dropWeight = (g.readers.get(head.inputs[1]!) ?? 0) === 1;
  const out = new Pieces();
  for (const f of g.fields) {
    if (f.number === GRAPH_NODE && g.nodes.get(f) === head) {
      const attributes = [intAttribute('K', K), intAttribute('N', N), intAttribute('bits', 8), intAttribute('block_size', BLOCK), intAttribute('accuracy_level', 4)];
      out.bytesField(GRAPH_NODE, node('MatMulNBits', [head.inputs[0]!, `${P}weight`, `${P}scales`], head.outputs[0]!, attributes, 'com.microsoft'));
      continue;
    }
    if (f.number === GRAPH_INITIALIZER && dropWeight && g.initializers.get(f) === head.inputs[1]) continue;
    out.push(model.subarray(f.start, f.end));
  }
  out.bytesField(GRAPH_INITIALIZER, rawTensor(`${P}weight`, TensorType.UINT8, [N, blocks, BLOCK], q));
  out.bytesField(GRAPH_INITIALIZER, rawTensor(`${P}scales`, TensorType.FLOAT, [N * blocks], new Uint8Array(scales.buffer)));
  return { graph: withGraph(model, g.field, out), bytes: q.byteLength + scales.byteLength };
}

/** `m` ([rows, cols], row-major) transposed. */
function transpose(m: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(m.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = m[r * cols + c]!;
  return out;
}
