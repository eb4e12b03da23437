/**
 * Precomputed rotary-embedding tables (Hugging Face "rotate-half" convention):
 *   inv_freq[i] = theta^(-2i / headDim),  i < headDim / 2   (unscaled; family-rope.ts scales them)
 *   angle[p, i] = angle[p, i + headDim/2] = p * inv_freq[i]
 *   cos[p, :] = cos(angle[p, :]) · factor,  sin[p, :] = sin(angle[p, :]) · factor
 * The graph gathers rows by position_ids. Computed in float64 with det-math (bit-reproducible),
 * stored as float32.
 */
import { detCos, detPow, detSin } from './det-math.ts';
import type { ModelSpec } from './specs.ts';

export interface RopeTables {
  /** [positions, headDim] */
  readonly cos: Float32Array;
  /** [positions, headDim] */
  readonly sin: Float32Array;
}

/** The unscaled inverse frequencies theta^(-2i / headDim). */
export function inverseFrequencies(theta: number, headDim: number): number[] {
  return Array.from({ length: headDim / 2 }, (_, i) => detPow(theta, -(2 * i) / headDim));
}

/** Rotate-half tables of `rows` positions for the given inverse frequencies, cos and sin multiplied by `factor`. */
export function rotateHalfTables(invFreq: readonly number[], rows: number, headDim: number, factor = 1): RopeTables {
  const half = headDim / 2;
  const cos = new Float32Array(rows * headDim);
  const sin = new Float32Array(rows * headDim);
  for (let p = 0; p < rows; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * (invFreq[i] as number);
      const c = detCos(angle) * factor;
      const s = detSin(angle) * factor;
      cos[p * headDim + i] = c;
      cos[p * headDim + i + half] = c;
      sin[p * headDim + i] = s;
      sin[p * headDim + i + half] = s;
    }
  }
  return { cos, sin };
}

/** A Llama spec's tables: unscaled, one row per position up to max_position_embeddings. */
export function ropeTables(spec: ModelSpec): RopeTables {
  return rotateHalfTables(inverseFrequencies(spec.ropeTheta, spec.headDim), spec.maxPositionEmbeddings, spec.headDim);
}
