/**
 * Weight quantization of the hub's `model_quantized.onnx` (dtype 'q8'): onnxruntime's
 * `quantize_dynamic` as transformers.js' scripts/quantize.py calls it for a model without Conv
 * layers — int8 weights, symmetric (zero point 0), per channel (one scale per output column of
 * W [in, out]), reduce_range (7-bit: |q| ≤ 64). The activations are quantized at run time by
 * DynamicQuantizeLinear (uint8, asymmetric) and multiplied with MatMulInteger (see llama-graph.ts).
 *
 *   scale[j] = f16round(max_i |W[i, j]| / 64)            (1 when the column is all zero)
 *   q[i, j]  = clamp(round(W[i, j] / scale[j]), -64, 64)
 *
 * One deviation, on purpose: the scale is rounded to a float16 value (stored as float32), so the
 * same int8 values and scales are exactly a GGUF Q8_0 tensor (blocks of 32 along the input axis,
 * each with this column's float16 scale) for the llama.cpp peer: both dequantize to q · scale.
 */
import { f16round } from './float16.ts';

/** The reduced (7-bit) symmetric int8 range of quantize_dynamic(reduce_range = True). */
export const Q8_MAX = 64;

export interface QuantizedMatrix {
  /** int8 [rows, cols] */
  readonly q: Int8Array;
  /** float32 [cols], every value exactly representable in float16 */
  readonly scale: Float32Array;
  readonly rows: number;
  readonly cols: number;
}

export function quantizePerColumn(w: Float32Array, rows: number, cols: number): QuantizedMatrix {
  if (w.length !== rows * cols) throw new Error(`quantizePerColumn: ${w.length} != ${rows}x${cols}`);
  const absMax = new Float64Array(cols);
  for (let i = 0; i < rows; i++) {
    const off = i * cols;
    for (let j = 0; j < cols; j++) {
      const a = Math.abs(w[off + j] as number);
      if (a > (absMax[j] as number)) absMax[j] = a;
    }
  }
  const scale = new Float32Array(cols);
  for (let j = 0; j < cols; j++) {
    const s = f16round((absMax[j] as number) / Q8_MAX);
    scale[j] = s > 0 ? s : 1;
  }
  const q = new Int8Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const off = i * cols;
    for (let j = 0; j < cols; j++) {
      const v = Math.round((w[off + j] as number) / (scale[j] as number));
      q[off + j] = v > Q8_MAX ? Q8_MAX : v < -Q8_MAX ? -Q8_MAX : v;
    }
  }
  return { q, scale, rows, cols };
}

/** q * scale as float32 [rows, cols]: the weights MatMulInteger · scale multiplies by. */
export function dequantize(m: QuantizedMatrix): Float32Array {
  const out = new Float32Array(m.rows * m.cols);
  for (let i = 0; i < m.rows; i++) {
    const off = i * m.cols;
    for (let j = 0; j < m.cols; j++) out[off + j] = (m.q[off + j] as number) * (m.scale[j] as number);
  }
  return out;
}
