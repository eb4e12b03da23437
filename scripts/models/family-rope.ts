/**
 * Rotary tables of the family models, following transformers' rope initialisation
 * (`modeling_rope_utils.py`):
 *   default   inv_freq[i] = theta^(-2i/D)
 *   llama3    wavelen = 2π / inv_freq; wavelen > orig/low_freq_factor → inv_freq / factor;
 *             wavelen < orig/high_freq_factor → unchanged; otherwise
 *             (1 - s)·inv_freq/factor + s·inv_freq with s = (orig/wavelen - low) / (high - low)
 *   longrope  inv_freq[i] = 1 / (short_factor[i] · theta^(2i/D)), cos and sin multiplied by
 *             sqrt(1 + ln(max/orig) / ln(orig)) (the graph's table covers positions < orig, where
 *             transformers uses the short factors)
 * Tables are [rows, D], rotate-half layout (angle[p, i] = angle[p, i + D/2] = p·inv_freq[i]);
 * computed in float64 with det-math (bit-reproducible), stored as float32.
 */
import { detCos, detPow, detSin } from './det-math.ts';
import type { FamilySpec } from './families.ts';
import type { RopeTables } from './rope.ts';

/** Inverse frequencies of `spec` for base `theta` (the local theta for Gemma's local layers). */
export function familyInvFreq(spec: FamilySpec, theta: number, local = false): number[] {
  const D = spec.headDim;
  const base = Array.from({ length: D / 2 }, (_, i) => detPow(theta, -(2 * i) / D));
  const sc = spec.ropeScaling;
  if (!sc || local) return base;
  if (sc.ropeType === 'llama3') {
    const lowWavelen = sc.originalMaxPositionEmbeddings / sc.lowFreqFactor;
    const highWavelen = sc.originalMaxPositionEmbeddings / sc.highFreqFactor;
    return base.map((f) => {
      const wavelen = (2 * Math.PI) / f;
      if (wavelen < highWavelen) return f;
      if (wavelen > lowWavelen) return f / sc.factor;
      const s = (sc.originalMaxPositionEmbeddings / wavelen - sc.lowFreqFactor) / (sc.highFreqFactor - sc.lowFreqFactor);
      return ((1 - s) * f) / sc.factor + s * f;
    });
  }
  return base.map((f, i) => f / (sc.shortFactor[i] as number));
}

/** cos/sin multiplier (longrope's attention factor; 1 otherwise). */
export function familyRopeAttentionFactor(spec: FamilySpec): number {
  const sc = spec.ropeScaling;
  if (sc?.ropeType !== 'longrope') return 1;
  const factor = spec.maxPositionEmbeddings / sc.originalMaxPositionEmbeddings;
  return factor <= 1 ? 1 : Math.sqrt(1 + Math.log(factor) / Math.log(sc.originalMaxPositionEmbeddings));
}

export function familyRopeTables(spec: FamilySpec, theta: number, local = false): RopeTables {
  const D = spec.headDim;
  const half = D / 2;
  const n = spec.ropeRows;
  const inv = familyInvFreq(spec, theta, local);
  const af = local ? 1 : familyRopeAttentionFactor(spec);
  const cos = new Float32Array(n * D);
  const sin = new Float32Array(n * D);
  for (let p = 0; p < n; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * (inv[i] as number);
      const c = detCos(angle) * af;
      const s = detSin(angle) * af;
      cos[p * D + i] = c;
      cos[p * D + i + half] = c;
      sin[p * D + i] = s;
      sin[p * D + i + half] = s;
    }
  }
  return { cos, sin };
}
