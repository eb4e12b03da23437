/**
 * The metrics of an extraction set (docs/evaluation.md, "Extraction sets"). Pure; each takes the
 * observations of one group (a field type, or one field).
 */
import type { ExpectedValue, ExtractionMetrics, ExtractionObservation } from './extraction-types.ts';
import { averageRanks } from './metrics.ts';
import type { ReliabilityBin } from './types.ts';

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

function sameScalar(a: string | number, b: string | number): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  return a === b;
}

/** Whether two values are the same: strings exactly, numbers to 1e-9 (relative), lists item by item; null equals only null. */
export function sameValue(a: ExpectedValue, b: ExpectedValue): boolean {
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameScalar(x, b[i]!));
  }
  return sameScalar(a, b);
}

/**
 * AUROC of `scores` for `positives`: the probability that a random positive scores above a random
 * negative, ties counting one half (Mann–Whitney U over average ranks). null when either class is empty.
 */
export function auroc(scores: readonly number[], positives: readonly boolean[]): number | null {
  const nPos = positives.filter(Boolean).length;
  const nNeg = positives.length - nPos;
  if (nPos === 0 || nNeg === 0) return null;
  const ranks = averageRanks(scores);
  const rankSum = ranks.reduce((s, r, i) => s + (positives[i] ? r : 0), 0);
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg);
}

/** The bin of p among `bins` equal-width bins [0, 1/bins), …, [(bins−1)/bins, 1]. */
function binOf(p: number, bins: number): number {
  let b = Math.min(bins - 1, Math.max(0, Math.floor(p * bins)));
  if (b > 0 && p < b / bins) b -= 1;
  else if (b < bins - 1 && p >= (b + 1) / bins) b += 1;
  return b;
}

/** Reliability of a confidence: per bin, the count, the mean confidence and the share right. */
export function confidenceBins(confidences: readonly number[], right: readonly boolean[], bins = 10): ReliabilityBin[] {
  const count = new Array<number>(bins).fill(0);
  const sum = new Array<number>(bins).fill(0);
  const hits = new Array<number>(bins).fill(0);
  confidences.forEach((c, i) => {
    const b = binOf(c, bins);
    count[b]! += 1;
    sum[b]! += c;
    if (right[i]) hits[b]! += 1;
  });
  return count.map((n, b) => ({ lower: b / bins, upper: (b + 1) / bins, count: n, confidence: n > 0 ? sum[b]! / n : 0, accuracy: n > 0 ? hits[b]! / n : 0 }));
}

/** ECE of the bins: Σ_b (n_b / n) · |acc_b − conf_b|. */
export function binsEce(reliability: readonly ReliabilityBin[]): number {
  const n = reliability.reduce((s, b) => s + b.count, 0);
  return n === 0 ? 0 : reliability.reduce((s, b) => s + (b.count / n) * Math.abs(b.accuracy - b.confidence), 0);
}

/** Character overlap over union of two spans (0 on different parts). */
export function spanIou(a: { part: number; start: number; end: number }, b: { part: number; start: number; end: number }): number {
  if (a.part !== b.part) return 0;
  const overlap = Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
  return overlap / (a.end - a.start + (b.end - b.start) - overlap);
}

export function extractionMetrics(key: string, observations: readonly ExtractionObservation[]): ExtractionMetrics {
  const answered = observations.filter((o) => !o.refused);
  const absent = answered.map((o) => o.expected === null);
  const pNull = answered.map((o) => o.pNull!);
  const present = answered.filter((o) => o.expected !== null);
  const right = present.map((o) => sameValue(o.guess, o.expected));
  const reliability = confidenceBins(present.map((o) => o.confidence!), right);
  const spans = answered.filter((o) => o.expectedSource !== null);
  return {
    key,
    items: observations.length,
    exact_match: mean(observations.map((o) => (!o.refused && sameValue(o.value, o.expected) ? 1 : 0))),
    refusals: observations.length - answered.length,
    null_brier: answered.length === 0 ? null : mean(pNull.map((p, i) => (p - (absent[i] ? 1 : 0)) ** 2)),
    null_auroc: auroc(pNull, absent),
    guess_accuracy: present.length === 0 ? null : mean(right.map((r) => (r ? 1 : 0))),
    confidence_ece: present.length === 0 ? null : binsEce(reliability),
    reliability,
    span_exact: spans.length === 0 ? null : mean(spans.map((o) => (o.source && spanIou(o.source, o.expectedSource!) === 1 ? 1 : 0))),
    span_iou: spans.length === 0 ? null : mean(spans.map((o) => (o.source ? spanIou(o.source, o.expectedSource!) : 0))),
    span_items: spans.length,
  };
}
