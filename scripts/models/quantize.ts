/**
 * Weight-only symmetric int8 quantization with one scale per output channel.
 *
 * For W [in, out] (row-major, y = x @ W): scale[j] = max_i |W[i, j]| / 127 (float32),
 * q[i, j] = clamp(round(W[i, j] / scale[j]), -127, 127). The graph restores
 * W' = q * scale through DequantizeLinear(axis = 1) and multiplies in float32.
 */

export interface QuantizedMatrix {
  /** int8 [rows, cols] */
  readonly q: Int8Array;
  /** float32 [cols] */
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
  const inv = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    const s = Math.fround((absMax[j] as number) / 127);
    scale[j] = s > 0 ? s : 1;
    inv[j] = 1 / (scale[j] as number);
  }
  const q = new Int8Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    const off = i * cols;
    for (let j = 0; j < cols; j++) {
      const v = Math.round((w[off + j] as number) * (inv[j] as number));
      q[off + j] = v > 127 ? 127 : v < -127 ? -127 : v;
    }
  }
  return { q, scale, rows, cols };
}

/** q * scale as float32 [rows, cols] — what DequantizeLinear computes. */
export function dequantize(m: QuantizedMatrix): Float32Array {
  const out = new Float32Array(m.rows * m.cols);
  for (let i = 0; i < m.rows; i++) {
    const off = i * m.cols;
    for (let j = 0; j < m.cols; j++) out[off + j] = (m.q[off + j] as number) * (m.scale[j] as number);
  }
  return out;
}
