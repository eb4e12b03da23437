/**
 * The quantized GGUF copies of a generated Llama model, for the llama.cpp peer at q4 and q8
 * (bench/peers): `gguf/model-q4_0.gguf` and `gguf/model-q8_0.gguf`, beside `gguf/model-f32.gguf`
 * (gguf-llama.ts: same metadata, tensor names, layouts and RoPE row permutation).
 *
 * Q4_0 (ggml `block_q4_0`, 18 bytes per 32 weights): float16 d, then 16 bytes; byte j holds element
 * j in its low nibble and element j + 16 in its high nibble; value = (nibble − 8) · d. A block runs
 * along a row of the [out, in] matrix, i.e. 32 consecutive inputs of one output — the same blocks as
 * MatMulNBits' (quantize-q4.ts: 32 consecutive K of one column N, zero point 8, float16-valued
 * scales). So every Q4_0 block here carries EXACTLY the nibbles and scale of the ONNX q4 / q4f16
 * model: only the nibble order within a block differs (MatMulNBits: element k in byte k / 2, low
 * nibble for even k), and rows move with llama.cpp's q/k RoPE permutation (whole rows, so whole blocks).
 *
 * Q8_0 (ggml `block_q8_0`, 34 bytes per 32 weights): float16 d, then 32 int8; value = q · d. The hub's
 * `model_quantized.onnx` (quantize.ts: quantize_dynamic, int8, one float16-valued scale per output
 * column, 7-bit range |q| ≤ 64) fits this exactly: each block of a row takes the row's column scale
 * and the same int8 values. So the GGUF carries the ONNX q8 weights exactly too — not llama.cpp's own
 * Q8_0 rounding (d = amax / 127 per block, finer), which would change the weights being compared.
 * What cannot be shared is the activations' quantization, which each runtime does at run time:
 * onnxruntime's DynamicQuantizeLinear makes x uint8 with one asymmetric scale and zero point per
 * tensor, llama.cpp's Q8_0 × Q8_0 dot product makes x int8 with one symmetric scale per block of 32
 * (finer). The two q8 models therefore multiply the same weights by differently rounded inputs,
 * and their logits differ by that rounding (measured by bench/peers/check-wllama.ts).
 * (Likewise at q4: onnxruntime's MatMulNBits multiplies float32 activations by the dequantized
 * nibbles, llama.cpp quantizes the activations to Q8_0 blocks for its Q4_0 dot product.)
 *
 * Which tensors are quantized: llama.cpp never quantizes 1-D tensors (the norms stay F32). Its
 * `llama-quantize` would also quantize `token_embd` (for a tied output, to Q8_0 or Q6_K), but the ONNX
 * q4 and q8 files keep the embedding, and so the tied lm_head, in float32 (MatMul4BitsQuantizer and
 * quantize_dynamic leave Gather and the tied Gemm alone). For equal work the GGUFs keep
 * `token_embd.weight` F32 too — the file `llama-quantize --token-embedding-type f32
 * --output-tensor-type f32` writes — and quantize exactly the projections the ONNX files quantize:
 * attn_q/k/v/output and ffn_gate/up/down.
 */
import type { Hash } from 'node:crypto';
import { float16Bits, float16Value } from './float16.ts';
import { type GgufTensorSpec, type GgufValue, GgmlType, gguf, writeGguf } from './gguf.ts';
import { llamaGgufMetadata, llamaGgufTensors, permuteRope } from './gguf-llama.ts';
import { Q4_BLOCK, type Q4Matrix, quantizeQ4 } from './quantize-q4.ts';
import { type QuantizedMatrix, quantizePerColumn } from './quantize.ts';
import type { ModelSpec } from './specs.ts';
import type { BpeModel } from './tokenizer.ts';
import type { LlamaWeights } from './weights.ts';

export const GGUF_Q4_0_FILE = 'gguf/model-q4_0.gguf';
export const GGUF_Q8_0_FILE = 'gguf/model-q8_0.gguf';

export type GgufQuant = 'q4_0' | 'q8_0';
export const GGUF_QUANT_FILES: Readonly<Record<GgufQuant, string>> = { q4_0: GGUF_Q4_0_FILE, q8_0: GGUF_Q8_0_FILE };

/** llama_ftype of the whole file. */
const FILE_TYPE: Record<GgufQuant, number> = { q4_0: 2, q8_0: 7 }; // LLAMA_FTYPE_MOSTLY_Q4_0, _Q8_0
const GGML_TYPE: Record<GgufQuant, GgmlType> = { q4_0: GgmlType.Q4_0, q8_0: GgmlType.Q8_0 };

export const QK = 32;
export const Q4_0_BLOCK_BYTES = 18;
export const Q8_0_BLOCK_BYTES = 34;

/**
 * Row order of llama.cpp's q/k permutation (gguf-llama.ts permuteRope): output row r of the GGUF
 * matrix is row order[r] of the Hugging Face matrix. Identity for the other projections.
 */
export function ropeRowOrder(heads: number, headDim: number): Int32Array {
  const ids = Float32Array.from({ length: heads * headDim }, (_, i) => i);
  return Int32Array.from(permuteRope(ids, heads, headDim, 1));
}

const identity = (n: number) => Int32Array.from({ length: n }, (_, i) => i);

/** MatMulNBits nibbles and scales (W [K, N]) → Q4_0 rows [N][K / 32 blocks], rows in `order`. */
export function q4ToQ4_0(m: Q4Matrix, order: Int32Array = identity(m.n)): Uint8Array {
  if (m.k % QK !== 0 || Q4_BLOCK !== QK) throw new Error(`q4ToQ4_0: K = ${m.k} is not a multiple of ${QK}`);
  if (order.length !== m.n) throw new Error(`q4ToQ4_0: ${order.length} rows ordered, ${m.n} in the matrix`);
  const blocks = m.k / QK;
  const out = new Uint8Array(m.n * blocks * Q4_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  const nibble = (col: number, b: number, r: number) => {
    const byte = m.packed[(col * blocks + b) * (QK / 2) + (r >> 1)]!;
    return r & 1 ? byte >> 4 : byte & 15;
  };
  for (let row = 0; row < m.n; row++) {
    const col = order[row]!;
    for (let b = 0; b < blocks; b++) {
      const at = (row * blocks + b) * Q4_0_BLOCK_BYTES;
      const scale = m.scales[col * blocks + b]!;
      const d = float16Bits(scale);
      if (float16Value(d) !== scale) throw new Error(`q4ToQ4_0: scale ${scale} of column ${col} block ${b} is not a float16 value`);
      view.setUint16(at, d, true);
      for (let j = 0; j < QK / 2; j++) out[at + 2 + j] = nibble(col, b, j) | (nibble(col, b, j + QK / 2) << 4);
    }
  }
  return out;
}

/** Per-column int8 (quantize_dynamic, W [K, N]) → Q8_0 rows [N][K / 32 blocks], rows in `order`. */
export function q8ToQ8_0(m: QuantizedMatrix, order: Int32Array = identity(m.cols)): Uint8Array {
  const K = m.rows;
  const N = m.cols;
  if (K % QK !== 0) throw new Error(`q8ToQ8_0: K = ${K} is not a multiple of ${QK}`);
  if (order.length !== N) throw new Error(`q8ToQ8_0: ${order.length} rows ordered, ${N} in the matrix`);
  const blocks = K / QK;
  const out = new Uint8Array(N * blocks * Q8_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let row = 0; row < N; row++) {
    const col = order[row]!;
    const scale = m.scale[col]!;
    const d = float16Bits(scale);
    if (float16Value(d) !== scale) throw new Error(`q8ToQ8_0: scale ${scale} of column ${col} is not a float16 value`);
    for (let b = 0; b < blocks; b++) {
      const at = (row * blocks + b) * Q8_0_BLOCK_BYTES;
      view.setUint16(at, d, true);
      for (let j = 0; j < QK; j++) view.setInt8(at + 2 + j, m.q[(b * QK + j) * N + col]!);
    }
  }
  return out;
}

/**
 * Decodes Q4_0 or Q8_0 blocks of a [rows, cols] (ggml ne = [cols, rows]) tensor to float32, the
 * way ggml's dequantize_row_q4_0 / _q8_0 do: an independent reading of the file for tests.
 */
export function dequantizeGgufBlocks(type: GgmlType, bytes: Uint8Array, cols: number, rows: number): Float32Array {
  const blockBytes = type === GgmlType.Q4_0 ? Q4_0_BLOCK_BYTES : type === GgmlType.Q8_0 ? Q8_0_BLOCK_BYTES : 0;
  if (!blockBytes) throw new Error(`dequantizeGgufBlocks: ggml type ${type} is not Q4_0 or Q8_0`);
  if (cols % QK !== 0 || bytes.length !== (rows * cols * blockBytes) / QK) throw new Error('dequantizeGgufBlocks: size mismatch');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(rows * cols);
  for (let blk = 0; blk < (rows * cols) / QK; blk++) {
    const at = blk * blockBytes;
    const d = float16Value(view.getUint16(at, true));
    const y = blk * QK;
    if (type === GgmlType.Q4_0) {
      for (let j = 0; j < QK / 2; j++) {
        const byte = bytes[at + 2 + j]!;
        out[y + j] = ((byte & 15) - 8) * d;
        out[y + j + QK / 2] = ((byte >> 4) - 8) * d;
      }
    } else {
      for (let j = 0; j < QK; j++) out[y + j] = view.getInt8(at + 2 + j) * d;
    }
  }
  return out;
}

/** The projections the ONNX q4 / q8 files quantize, by GGUF name: generator weight [in, out] and RoPE heads. */
function projections(spec: ModelSpec, w: LlamaWeights): Map<string, { w: Float32Array; k: number; n: number; order: Int32Array }> {
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const inter = spec.intermediateSize;
  const out = new Map<string, { w: Float32Array; k: number; n: number; order: Int32Array }>();
  w.layers.forEach((l, i) => {
    const p = `blk.${i}.`;
    out.set(`${p}attn_q.weight`, { w: l.q, k: h, n: H * D, order: ropeRowOrder(H, D) });
    out.set(`${p}attn_k.weight`, { w: l.k, k: h, n: KV * D, order: ropeRowOrder(KV, D) });
    out.set(`${p}attn_v.weight`, { w: l.v, k: h, n: KV * D, order: identity(KV * D) });
    out.set(`${p}attn_output.weight`, { w: l.o, k: H * D, n: h, order: identity(h) });
    out.set(`${p}ffn_gate.weight`, { w: l.gate, k: h, n: inter, order: identity(inter) });
    out.set(`${p}ffn_up.weight`, { w: l.up, k: h, n: inter, order: identity(inter) });
    out.set(`${p}ffn_down.weight`, { w: l.down, k: inter, n: h, order: identity(h) });
  });
  return out;
}

/** The tensors of the quantized GGUF: gguf-llama.ts's, with the projections as Q4_0 or Q8_0 blocks. */
export function quantGgufTensors(spec: ModelSpec, w: LlamaWeights, quant: GgufQuant): GgufTensorSpec[] {
  const proj = projections(spec, w);
  return llamaGgufTensors(spec, w).map((t) => {
    const p = proj.get(t.name);
    if (!p) return t;
    if (t.ne[0] !== p.k || t.ne[1] !== p.n) throw new Error(`${t.name}: ne ${t.ne} is not [${p.k}, ${p.n}]`);
    const data = quant === 'q4_0' ? () => q4ToQ4_0(quantizeQ4(p.w, p.k, p.n), p.order) : () => q8ToQ8_0(quantizePerColumn(p.w, p.k, p.n), p.order);
    return { name: t.name, ne: t.ne, type: GGML_TYPE[quant], data };
  });
}

export function quantGgufMetadata(spec: ModelSpec, bpe: BpeModel, quant: GgufQuant): [string, GgufValue][] {
  return llamaGgufMetadata(spec, bpe).map(([k, v]): [string, GgufValue] => {
    if (k === 'general.file_type') return [k, gguf.u32(FILE_TYPE[quant])];
    if (k === 'general.description') {
      return [k, gguf.str(`Random-weight ${spec.name} (${quant.toUpperCase()}: the projections of the ONNX ${quant === 'q4_0' ? 'q4' : 'q8'} model, embedding and norms F32) generated by scripts/models; for tests only.`)];
    }
    return [k, v];
  });
}

/** Writes `<path>` (GGUF v3, Q4_0 or Q8_0 projections); returns its size. */
export function writeQuantGguf(path: string, spec: ModelSpec, weights: LlamaWeights, bpe: BpeModel, quant: GgufQuant, hash?: Hash): number {
  return writeGguf(path, quantGgufMetadata(spec, bpe, quant), quantGgufTensors(spec, weights, quant), hash).bytes;
}
