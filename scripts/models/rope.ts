/**
 * Precomputed rotary-embedding tables (Hugging Face Llama "rotate-half" convention, no scaling):
 *   inv_freq[i] = theta^(-2i / headDim),  i < headDim / 2
 *   angle[p, i] = angle[p, i + headDim/2] = p * inv_freq[i]
 *   cos[p, :] = cos(angle[p, :]),  sin[p, :] = sin(angle[p, :])
 * The graph gathers rows by position_ids. Computed in float64 with det-math (bit-reproducible),
 * stored as float32.
 */
import { detCos, detPow, detSin } from './det-math.ts';
import type { ModelSpec } from './specs.ts';

export interface RopeTables {
  /** [maxPositionEmbeddings, headDim] */
  readonly cos: Float32Array;
  /** [maxPositionEmbeddings, headDim] */
  readonly sin: Float32Array;
}

export function ropeTables(spec: ModelSpec): RopeTables {
  const d = spec.headDim;
  const half = d / 2;
  const n = spec.maxPositionEmbeddings;
  const invFreq = Array.from({ length: half }, (_, i) => detPow(spec.ropeTheta, -(2 * i) / d));
  const cos = new Float32Array(n * d);
  const sin = new Float32Array(n * d);
  for (let p = 0; p < n; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * (invFreq[i] as number);
      const c = detCos(angle);
      const s = detSin(angle);
      cos[p * d + i] = c;
      cos[p * d + i + half] = c;
      sin[p * d + i] = s;
      sin[p * d + i + half] = s;
    }
  }
  return { cos, sin };
}
