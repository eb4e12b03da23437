/**
 * The hub's dtypes (transformers.js names) and how each one writes a projection `y = x @ W`
 * (W [in, out], the Hugging Face weight transposed) into a graph:
 *
 *   fp32   MatMul with a float32 initializer
 *   fp16   MatMul with a float16 initializer (x float16)
 *   q4     com.microsoft MatMulNBits(K, N, bits 4, block_size 32), float32 scales (float16 values)
 *   q4f16  the same nibbles, float16 scales, x float16
 *   q8     quantize_dynamic's pattern: DynamicQuantizeLinear(x) → MatMulInteger(x_q, W_int8,
 *          x_zero_point, W_zero_point) → Cast(float32) → Mul(x_scale · W_scale)
 *
 * Initializer names: `<hf>.T` (fp32/fp16), `<hf>.q4` + `<hf>.scales` (q4/q4f16, as family-graph.ts),
 * `<hf>.T_quantized` / `_scale` / `_zero_point` (q8, quantize_dynamic's suffixes).
 */
import { toFloat16Bits } from './float16.ts';
import { DataType, type GraphBuilder, bytesOf } from './onnx-graph.ts';
import { Q4_BLOCK, quantizeQ4 } from './quantize-q4.ts';
import { quantizePerColumn } from './quantize.ts';

export type WeightFormat = 'fp32' | 'fp16' | 'q4' | 'q4f16' | 'q8';
export const WEIGHT_FORMATS: readonly WeightFormat[] = ['fp32', 'fp16', 'q4', 'q4f16', 'q8'];

/** True for the formats whose activations, KV cache and logits are float16. */
export function isHalfFormat(format: WeightFormat): boolean {
  return format === 'fp16' || format === 'q4f16';
}

/** The element type of the activations, KV cache and logits of a format. */
export function activationType(format: WeightFormat): DataType {
  return isHalfFormat(format) ? DataType.FLOAT16 : DataType.FLOAT;
}

/** Adds a float initializer in the format's activation type (float16 bits for the half formats). */
export function activationInit(g: GraphBuilder, format: WeightFormat) {
  const half = isHalfFormat(format);
  return (name: string, dims: readonly number[], data: Float32Array): string =>
    half ? g.initializer(name, DataType.FLOAT16, dims, bytesOf(toFloat16Bits(data))) : g.floatInit(name, dims, data);
}

/**
 * A `linear(x, W, rows, cols, hfName, nodePrefix)` that writes one projection in `format` and
 * returns its output. For q8, activations already quantized (same `x`) are reused, as
 * quantize_dynamic does for q/k/v and gate/up.
 */
export function formatLinear(g: GraphBuilder, format: WeightFormat) {
  const actInit = activationInit(g, format);
  const dynQuant = new Map<string, string[]>();
  return (x: string, w: Float32Array, rows: number, cols: number, hfName: string, node: string): string => {
    const wName = `${hfName}.T`;
    if (format === 'fp32' || format === 'fp16') {
      actInit(wName, [rows, cols], w);
      return g.op('MatMul', [x, wName], `${node}/MatMul`);
    }
    if (format === 'q4' || format === 'q4f16') {
      if (rows % Q4_BLOCK !== 0) throw new Error(`${hfName}: K = ${rows} is not a multiple of ${Q4_BLOCK}`);
      const q = quantizeQ4(w, rows, cols);
      g.initializer(`${hfName}.q4`, DataType.UINT8, [cols, rows / Q4_BLOCK, Q4_BLOCK / 2], q.packed);
      actInit(`${hfName}.scales`, [q.scales.length], q.scales);
      const [out] = g.node('MatMulNBits', [x, `${hfName}.q4`, `${hfName}.scales`], {
        name: `${node}/MatMulNBits`,
        domain: 'com.microsoft',
        attrs: { K: rows, N: cols, bits: 4, block_size: Q4_BLOCK },
      });
      return out as string;
    }
    const qm = quantizePerColumn(w, rows, cols);
    g.initializer(`${wName}_quantized`, DataType.INT8, [rows, cols], bytesOf(qm.q));
    g.floatInit(`${wName}_scale`, [cols], qm.scale);
    g.initializer(`${wName}_zero_point`, DataType.INT8, [cols], new Uint8Array(cols));
    let xq = dynQuant.get(x);
    if (!xq) {
      xq = g.node('DynamicQuantizeLinear', [x], { name: `${node}/DynamicQuantizeLinear`, count: 3 });
      dynQuant.set(x, xq);
    }
    const [xQuant, xScale, xZero] = xq as [string, string, string];
    const acc = g.op('MatMulInteger', [xQuant, `${wName}_quantized`, xZero, `${wName}_zero_point`], `${node}/MatMulInteger`);
    const accF = g.op('Cast', [acc], `${node}/Cast`, { to: DataType.FLOAT });
    const scales = g.op('Mul', [xScale, `${wName}_scale`], `${node}/ScaleMul`);
    return g.op('Mul', [accF, scales], `${node}/Mul`);
  };
}

/** Extra operator sets a format's graph imports. */
export function formatOpsets(format: WeightFormat): { domain: string; version: number }[] {
  return format === 'q4' || format === 'q4f16' ? [{ domain: 'com.microsoft', version: 1 }] : [];
}
