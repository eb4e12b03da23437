/**
 * Confidence of a choice or score answer, in [0, 1]. It is not the top probability: it combines
 * how sharply the probabilities single out an answer with how much of the model's next-token
 * mass landed on valid answers at all (its `coverage`).
 *
 * - choice: (1 − H(p) / ln K) · coverage — 1 when one option holds all the probability and the
 *   model wrote nothing but valid options; 0 when all K options are equally likely.
 * - score: (1 − σ / σmax) · coverage, where σ is the standard deviation of the grade
 *   distribution and σmax = (K − 1) / 2 the largest possible on K grades: an ordinal answer split
 *   between neighbouring grades is surer than one split between the ends of the scale.
 */
export function choiceConfidence(probabilities: readonly number[], coverage: number): number {
  const k = probabilities.length;
  if (k < 2) return clamp01(coverage);
  let entropy = 0;
  for (const p of probabilities) if (p > 0) entropy -= p * Math.log(p);
  return clamp01((1 - entropy / Math.log(k)) * clamp01(coverage));
}

export function scoreConfidence(probabilities: readonly number[], coverage: number): number {
  const k = probabilities.length;
  if (k < 2) return clamp01(coverage);
  let mean = 0;
  probabilities.forEach((p, i) => (mean += p * i));
  let variance = 0;
  probabilities.forEach((p, i) => (variance += p * (i - mean) ** 2));
  const maxSd = (k - 1) / 2;
  return clamp01((1 - Math.sqrt(variance) / maxSd) * clamp01(coverage));
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}
