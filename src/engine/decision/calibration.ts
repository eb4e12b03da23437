/**
 * Applying a fitted calibration profile (src/contract/calibration-profile.ts) to one answer's
 * probabilities, and split-conformal prediction sets. The same functions serve the engine (a
 * request with `calibration` / `prediction_set`) and the evaluation (src/evaluation), so what is
 * fitted is exactly what is applied.
 */
import type { QuestionFit } from '../../contract/index.ts';

/** Probabilities are clipped to [EPS, 1 − EPS] before a logarithm or a logit. */
export const EPS = 1e-12;

/**
 * Maps probabilities (in the answers' order; for noul `[p(true), p(false)]`) through a fit.
 * - temperature T: p'ᵢ = pᵢ^(1/T) / Σⱼ pⱼ^(1/T) (a softmax of log p / T); a zero stays zero.
 * - platt (a, b), two answers: p'(first) = σ(a · logit p(first) + b), p'(second) = 1 − p'(first).
 */
export function applyFit(probabilities: readonly number[], fit: QuestionFit): number[] {
  switch (fit.method) {
    case 'identity':
      return [...probabilities];
    case 'temperature': {
      const logs = probabilities.map((p) => (p > 0 ? Math.log(p) / fit.temperature : -Infinity));
      const top = Math.max(...logs);
      if (!Number.isFinite(top)) return [...probabilities];
      const e = logs.map((l) => Math.exp(l - top));
      const total = e.reduce((a, b) => a + b, 0);
      return e.map((x) => x / total);
    }
    case 'platt': {
      if (probabilities.length !== 2) throw new Error(`platt scaling takes two answers, got ${probabilities.length}`);
      const p = sigmoid(fit.a * logit(probabilities[0]!) + fit.b);
      return [p, 1 - p];
    }
    default: {
      const never: never = fit;
      throw new Error(`unknown fit ${(never as { method: string }).method}`);
    }
  }
}

export function logit(p: number): number {
  const q = Math.min(1 - EPS, Math.max(EPS, p));
  return Math.log(q) - Math.log1p(-q);
}

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** The nonconformity score of an answer: 1 − its (calibrated) probability. */
export function nonconformity(probabilities: readonly number[], expected: number): number {
  return 1 - probabilities[expected]!;
}

/**
 * The split-conformal threshold q̂ for miscoverage alpha: the ⌈(n + 1)(1 − alpha)⌉-th smallest of
 * the n held-out scores (sorted ascending), or Infinity when that rank exceeds n (too few items
 * for this alpha: every answer is in every set).
 */
export function conformalThreshold(sortedScores: readonly number[], alpha: number): number {
  const n = sortedScores.length;
  const rank = Math.ceil((n + 1) * (1 - alpha));
  return rank > n ? Infinity : sortedScores[rank - 1]!;
}

/**
 * The prediction set: every answer whose score 1 − p' is at most q̂, plus the most probable answer
 * when none qualifies (a set is never empty; adding an answer only raises coverage). Indices in
 * the answers' order. Under exchangeability of the held-out items and the new one,
 * P(expected ∈ set) ≥ 1 − alpha.
 */
export function predictionSet(probabilities: readonly number[], threshold: number): number[] {
  const set: number[] = [];
  probabilities.forEach((p, i) => {
    if (1 - p <= threshold) set.push(i);
  });
  if (set.length === 0) {
    let best = 0;
    probabilities.forEach((p, i) => {
      if (p > probabilities[best]!) best = i;
    });
    set.push(best);
  }
  return set;
}
