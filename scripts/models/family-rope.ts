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
import { type FamilySpec, isSlidingLayer } from './families.ts';
import type { RotaryTables } from './family-graph.ts';
import { type RopeTables, inverseFrequencies, rotateHalfTables } from './rope.ts';

/** Inverse frequencies of `spec` for base `theta` (the local theta for Gemma's local layers). */
export function familyInvFreq(spec: FamilySpec, theta: number, local = false): number[] {
  const base = inverseFrequencies(theta, spec.headDim);
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
  return rotateHalfTables(familyInvFreq(spec, theta, local), spec.ropeRows, spec.headDim, local ? 1 : familyRopeAttentionFactor(spec));
}

/** A family model's tables: of every layer, and of the local (sliding) layers where it has them (Gemma 3). */
export function familyRotaryTables(spec: FamilySpec): RotaryTables {
  const global = familyRopeTables(spec, spec.ropeTheta);
  const sliding = Array.from({ length: spec.numHiddenLayers }, (_, i) => isSlidingLayer(spec, i)).some(Boolean);
  return sliding ? { global, local: familyRopeTables(spec, spec.ropeLocalTheta ?? spec.ropeTheta, true) } : { global };
}
