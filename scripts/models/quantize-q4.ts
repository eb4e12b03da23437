/**
 * 4-bit block quantization in the layout of onnxruntime's com.microsoft MatMulNBits
 * (bits 4, block_size 32), the format of the hub's `model_q4.onnx` files.
 *
 * For W [K, N] (row-major, y = x @ W), each output column n and block b of 32 rows:
 *   scale[n, b] = f16round(max |W[k, n]| / 7) over the block (1 when the block is all zero)
 *   q[k, n]     = clamp(round(W[k, n] / scale), -8, 7) + 8          (unsigned nibble 0..15)
 * MatMulNBits, with no zero_points input, uses the zero point 8: W' = (q - 8) · scale.
 * B is uint8 [N, K/32, 16]: element k of a block goes to byte k/2, low nibble for even k.
 *
 * Every scale is a float16 value (kept in a Float32Array), so the same nibbles and scales are
 * exactly a float16-scaled MatMulNBits (q4f16) and a GGUF Q4_0 block (float16 d, (q - 8) · d).
 */
import { f16round } from './float16.ts';

export const Q4_BLOCK = 32;

export interface Q4Matrix {
  /** uint8 [N, K / 32, 16] */
  readonly packed: Uint8Array;
  /** float32 [N · K / 32], each exactly representable in float16 */
  readonly scales: Float32Array;
  readonly k: number;
  readonly n: number;
}

export function quantizeQ4(w: Float32Array, k: number, n: number): Q4Matrix {
  if (w.length !== k * n) throw new Error(`quantizeQ4: ${w.length} != ${k}x${n}`);
  if (k % Q4_BLOCK !== 0) throw new Error(`quantizeQ4: K = ${k} is not a multiple of ${Q4_BLOCK}`);
  const blocks = k / Q4_BLOCK;
  const packed = new Uint8Array(n * blocks * (Q4_BLOCK / 2));
  const scales = new Float32Array(n * blocks);
  for (let col = 0; col < n; col++) {
    for (let b = 0; b < blocks; b++) {
      let absMax = 0;
      for (let r = 0; r < Q4_BLOCK; r++) absMax = Math.max(absMax, Math.abs(w[(b * Q4_BLOCK + r) * n + col] as number));
      const r16 = f16round(absMax / 7);
      // a block too small for float16 (never in practice) falls back to the smallest subnormal
      const s = absMax > 0 ? (r16 > 0 ? r16 : 2 ** -24) : 1;
      scales[col * blocks + b] = s;
      const base = (col * blocks + b) * (Q4_BLOCK / 2);
      for (let r = 0; r < Q4_BLOCK; r++) {
        const v = Math.round((w[(b * Q4_BLOCK + r) * n + col] as number) / s);
        const q = (v > 7 ? 7 : v < -8 ? -8 : v) + 8;
        const byte = base + (r >> 1);
        packed[byte] = (packed[byte] as number) | (r & 1 ? q << 4 : q);
      }
    }
  }
  return { packed, scales, k, n };
}

/** (q - 8) · scale as float32 [K, N]: what MatMulNBits multiplies by. */
export function dequantizeQ4(m: Q4Matrix): Float32Array {
  const blocks = m.k / Q4_BLOCK;
  const out = new Float32Array(m.k * m.n);
  for (let col = 0; col < m.n; col++) {
    for (let b = 0; b < blocks; b++) {
      const s = m.scales[col * blocks + b] as number;
      const base = (col * blocks + b) * (Q4_BLOCK / 2);
      for (let r = 0; r < Q4_BLOCK; r++) {
        const byte = m.packed[base + (r >> 1)] as number;
        const q = r & 1 ? byte >> 4 : byte & 15;
        out[(b * Q4_BLOCK + r) * m.n + col] = (q - 8) * s;
      }
    }
  }
  return out;
}
