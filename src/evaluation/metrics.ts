/**
 * The metrics of one question over a labelled set (docs/evaluation.md quotes these definitions).
 * Every function takes observations of one question (same answers, same order) and is pure.
 * An observation's prediction is its argmax: the most probable answer, ties going to the first in
 * answer order.
 */
import type { Observation, QuestionMetrics, ReliabilityBin } from './types.ts';

/** Probabilities below this are read as this inside a logarithm (log loss). */
export const LOG_LOSS_FLOOR = 1e-12;

/** The most probable answer's index; ties: the first in answer order. */
export function argmax(probabilities: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < probabilities.length; i++) if (probabilities[i]! > probabilities[best]!) best = i;
  return best;
}

/** Accuracy: the share of items whose argmax answer (ties: the first in answer order) equals the expected one. */
export function accuracy(observations: readonly Observation[]): number {
  return mean(observations.map((o) => (argmax(o.probabilities) === o.expected ? 1 : 0)));
}

/**
 * Macro-F1 (noul, choice): the mean over the question's answers of F1 = 2·TP / (2·TP + FP + FN),
 * where, for answer k, TP counts items expected k and predicted k, FP items predicted k but
 * expected another, FN items expected k but predicted another. An answer with TP + FP + FN = 0
 * (never expected, never predicted) has no F1 and is left out of the mean; an answer that is
 * expected but never predicted (or predicted but never expected) counts with F1 = 0.
 */
export function macroF1(observations: readonly Observation[]): number {
  const confusion = confusionMatrix(observations);
  const scores: number[] = [];
  confusion.forEach((row, k) => {
    const tp = row[k]!;
    const fn = row.reduce((a, b) => a + b, 0) - tp;
    const fp = confusion.reduce((a, r) => a + r[k]!, 0) - tp;
    if (tp + fp + fn > 0) scores.push((2 * tp) / (2 * tp + fp + fn));
  });
  return mean(scores);
}

/** Brier score: the mean over items of Σₖ (pₖ − yₖ)², y the one-hot expected answer (0..2). */
export function brierScore(observations: readonly Observation[]): number {
  return mean(observations.map((o) => o.probabilities.reduce((s, p, k) => s + (p - (k === o.expected ? 1 : 0)) ** 2, 0)));
}

/** Log loss: the mean over items of −ln max(p(expected), 1e-12). */
export function logLoss(observations: readonly Observation[]): number {
  return mean(observations.map((o) => -Math.log(Math.max(o.probabilities[o.expected]!, LOG_LOSS_FLOOR))));
}

/**
 * The reliability diagram, top-label: each item falls in one of `bins` equal-width bins by its top
 * probability (the argmax answer's), [0, 1/bins), …, [(bins−1)/bins, 1] (the last includes 1).
 * Per bin: the count, the mean top probability (confidence) and the share of its items whose
 * argmax is the expected answer (accuracy); both 0 for an empty bin.
 */
export function reliabilityBins(observations: readonly Observation[], bins = 10): ReliabilityBin[] {
  const count = new Array<number>(bins).fill(0);
  const confidence = new Array<number>(bins).fill(0);
  const correct = new Array<number>(bins).fill(0);
  for (const o of observations) {
    const top = argmax(o.probabilities);
    const p = o.probabilities[top]!;
    const b = binOf(p, bins);
    count[b]! += 1;
    confidence[b]! += p;
    if (top === o.expected) correct[b]! += 1;
  }
  return count.map((n, b) => ({
    lower: b / bins,
    upper: (b + 1) / bins,
    count: n,
    confidence: n > 0 ? confidence[b]! / n : 0,
    accuracy: n > 0 ? correct[b]! / n : 0,
  }));
}

/** The bin of a probability: b with b/bins ≤ p < (b+1)/bins, the last bin holding 1 (consistent with the bounds reported). */
function binOf(p: number, bins: number): number {
  let b = Math.min(bins - 1, Math.max(0, Math.floor(p * bins)));
  // p · bins may round across a boundary; the reported bounds b / bins decide.
  if (b > 0 && p < b / bins) b -= 1;
  else if (b < bins - 1 && p >= (b + 1) / bins) b += 1;
  return b;
}

/**
 * Expected calibration error, top-label, with `bins` (10) equal-width bins on the top probability,
 * [0, 0.1), …, [0.9, 1.0]: Σ_b (n_b / n) · |acc_b − conf_b|, where n_b is the number of items in
 * bin b, acc_b the share of them whose argmax is the expected answer and conf_b their mean top
 * probability. Empty bins add nothing.
 */
export function expectedCalibrationError(observations: readonly Observation[], bins = 10): number {
  const n = observations.length;
  if (n === 0) return 0;
  return reliabilityBins(observations, bins).reduce((s, bin) => s + (bin.count / n) * Math.abs(bin.accuracy - bin.confidence), 0);
}

/** confusion[i][j]: the number of items expected answers[i] whose argmax was answers[j]. */
export function confusionMatrix(observations: readonly Observation[]): number[][] {
  const k = observations[0]?.answers.length ?? 0;
  const matrix = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  for (const o of observations) matrix[o.expected]![argmax(o.probabilities)]! += 1;
  return matrix;
}

/** A score answer's score: Σ index · p (as the engine computes `score`). */
export function expectedScore(probabilities: readonly number[]): number {
  return probabilities.reduce((s, p, i) => s + i * p, 0);
}

/** Score MAE: the mean over items of |Σᵢ i · pᵢ − expected index|. */
export function meanAbsoluteError(observations: readonly Observation[]): number {
  return mean(observations.map((o) => Math.abs(expectedScore(o.probabilities) - o.expected)));
}

/**
 * Spearman's ρ between the expected indices and the scores Σ i · pᵢ: Pearson's correlation of
 * their ranks, tied values getting the average of the ranks they span. Null with fewer than 2
 * items or when either side has zero variance (ρ undefined).
 */
export function spearman(observations: readonly Observation[]): number | null {
  if (observations.length < 2) return null;
  return pearson(
    averageRanks(observations.map((o) => o.expected)),
    averageRanks(observations.map((o) => expectedScore(o.probabilities))),
  );
}

/** 1-based ranks, ties sharing the mean of the ranks they span ([10, 20, 20, 30] → [1, 2.5, 2.5, 4]). */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((v, i) => ({ v, i })).sort((a, b) => a.v - b.v);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1]!.v === order[start]!.v) end++;
    const rank = (start + end) / 2 + 1;
    for (let j = start; j <= end; j++) ranks[order[j]!.i] = rank;
    start = end + 1;
  }
  return ranks;
}

/** Pearson's correlation; null when either side has zero variance. */
function pearson(x: readonly number[], y: readonly number[]): number | null {
  const mx = mean(x);
  const my = mean(y);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  x.forEach((xi, i) => {
    const dx = xi - mx;
    const dy = y[i]! - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  });
  if (sxx === 0 || syy === 0) return null;
  return sxy / Math.sqrt(sxx * syy);
}

/**
 * Every metric of one question. `sets`, when the answers carried prediction sets: the alpha asked
 * and each observation's set (indices, aligned with `observations`); coverage is the share of
 * items whose expected answer is in its set, mean_size the mean number of answers in a set.
 */
export function questionMetrics(observations: readonly Observation[], sets?: { alpha: number; sets: number[][]; crossFold?: boolean } | null): QuestionMetrics {
  const first = observations[0];
  if (!first) throw new Error('questionMetrics needs at least one observation');
  for (const o of observations) {
    if (o.key !== first.key || o.answers.length !== first.answers.length || o.answers.some((a, i) => a !== first.answers[i])) {
      throw new Error(`observations of question "${first.key}" do not all have the answers ${first.answers.join(', ')} (item ${o.item})`);
    }
  }
  if (sets && sets.sets.length !== observations.length) {
    throw new Error(`${sets.sets.length} prediction sets for ${observations.length} observations of question "${first.key}"`);
  }
  const isScore = first.type === 'score';
  const masses = observations.flatMap((o) => (o.answerMass === null ? [] : [o.answerMass]));
  return {
    key: first.key,
    type: first.type,
    items: observations.length,
    answers: [...first.answers],
    accuracy: accuracy(observations),
    macro_f1: isScore ? null : macroF1(observations),
    mae: isScore ? meanAbsoluteError(observations) : null,
    spearman: isScore ? spearman(observations) : null,
    brier: brierScore(observations),
    log_loss: logLoss(observations),
    ece: expectedCalibrationError(observations),
    reliability: reliabilityBins(observations),
    confusion: confusionMatrix(observations),
    mean_answer_mass: masses.length > 0 ? mean(masses) : null,
    prediction_sets: sets
      ? {
          alpha: sets.alpha,
          coverage: mean(observations.map((o, i) => (sets.sets[i]!.includes(o.expected) ? 1 : 0))),
          mean_size: mean(sets.sets.map((s) => s.length)),
          cross_fold: sets.crossFold ?? false,
        }
      : null,
  };
}

/** The arithmetic mean; 0 for no values (metrics of an empty set are not reported). */
function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}
