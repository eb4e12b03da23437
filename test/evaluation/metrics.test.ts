// The metric definitions (src/evaluation/metrics.ts) against values worked out by hand on small
// fixtures; the arithmetic is written out next to each expectation.
import { describe, expect, it } from 'vitest';
import {
  accuracy,
  averageRanks,
  brierScore,
  confusionMatrix,
  expectedCalibrationError,
  logLoss,
  macroF1,
  meanAbsoluteError,
  questionMetrics,
  reliabilityBins,
  spearman,
  type Observation,
} from '../../src/evaluation/index.ts';

function obs(key: string, type: Observation['type'], answers: string[], rows: [number[], number][]): Observation[] {
  return rows.map(([probabilities, expected], item) => ({ item, key, type, answers, probabilities, expected, answerMass: null, latencyMs: 0 }));
}

// Four items, three answers a, b, c.
//   item  p(a)  p(b)  p(c)  expected  argmax      top p
//   0     0.62  0.28  0.10  a         a (right)   0.62
//   1     0.50  0.30  0.20  b         a (wrong)   0.50
//   2     0.25  0.65  0.10  b         b (right)   0.65
//   3     0.40  0.40  0.20  c         a (tie → first; wrong)  0.40
const CHOICE = obs('q', 'choice', ['a', 'b', 'c'], [
  [[0.62, 0.28, 0.1], 0],
  [[0.5, 0.3, 0.2], 1],
  [[0.25, 0.65, 0.1], 1],
  [[0.4, 0.4, 0.2], 2],
]);

describe('choice metrics on a hand fixture', () => {
  it('accuracy: 2 of 4 argmaxes are right (the tie goes to the first answer)', () => {
    expect(accuracy(CHOICE)).toBe(0.5);
  });

  it('confusion matrix: rows expected, columns argmax', () => {
    // expected a: predicted a once; expected b: a once, b once; expected c: a once.
    expect(confusionMatrix(CHOICE)).toEqual([
      [1, 0, 0],
      [1, 1, 0],
      [1, 0, 0],
    ]);
  });

  it('macro-F1 counts an answer never predicted with F1 = 0', () => {
    // a: TP 1, FP 2 (items 1, 3), FN 0 → 2/(2+2) = 1/2
    // b: TP 1, FP 0, FN 1 (item 1)    → 2/(2+1) = 2/3
    // c: TP 0, FP 0, FN 1 (item 3)    → 0 (expected once, never predicted)
    // mean (1/2 + 2/3 + 0) / 3 = 7/18
    expect(macroF1(CHOICE)).toBeCloseTo(7 / 18, 12);
  });

  it('macro-F1 leaves out an answer never expected nor predicted', () => {
    // A fourth answer d with probability 0 everywhere: TP + FP + FN = 0, left out: still 7/18
    // (counting it with F1 = 0 would give 7/24).
    const withD = CHOICE.map((o) => ({ ...o, answers: [...o.answers, 'd'], probabilities: [...o.probabilities, 0] }));
    expect(macroF1(withD)).toBeCloseTo(7 / 18, 12);
  });

  it('Brier: mean of Σ (p − y)²', () => {
    // 0: 0.38² + 0.28² + 0.10² = 0.1444 + 0.0784 + 0.01 = 0.2328
    // 1: 0.50² + 0.70² + 0.20² = 0.25 + 0.49 + 0.04   = 0.78
    // 2: 0.25² + 0.35² + 0.10² = 0.0625 + 0.1225 + 0.01 = 0.195
    // 3: 0.40² + 0.40² + 0.80² = 0.16 + 0.16 + 0.64   = 0.96
    // mean = 2.1678 / 4 = 0.54195
    expect(brierScore(CHOICE)).toBeCloseTo(0.54195, 12);
  });

  it('log loss: mean of −ln p(expected)', () => {
    // −(ln 0.62 + ln 0.30 + ln 0.65 + ln 0.20) / 4 = (0.478036 + 1.203973 + 0.430783 + 1.609438) / 4
    expect(logLoss(CHOICE)).toBeCloseTo((0.4780358009 + 1.2039728043 + 0.4307829161 + 1.6094379124) / 4, 9);
  });

  it('log loss floors p(expected) at 1e-12', () => {
    const zero = obs('q', 'choice', ['a', 'b'], [[[1, 0], 1]]);
    expect(logLoss(zero)).toBeCloseTo(12 * Math.LN10, 9); // −ln 1e-12 = 27.631…
  });

  it('reliability bins and ECE, with empty bins', () => {
    // top p: 0.62 → bin 6 (right), 0.50 → bin 5 (wrong), 0.65 → bin 6 (right), 0.40 → bin 4 (wrong)
    const bins = reliabilityBins(CHOICE);
    expect(bins.map((b) => b.count)).toEqual([0, 0, 0, 0, 1, 1, 2, 0, 0, 0]);
    expect(bins[6]!.confidence).toBeCloseTo((0.62 + 0.65) / 2, 12);
    expect(bins[6]!.accuracy).toBe(1);
    expect(bins[4]!.accuracy).toBe(0);
    expect(bins[0]).toEqual({ lower: 0, upper: 0.1, count: 0, confidence: 0, accuracy: 0 });
    // ECE = 1/4·|0 − 0.4| + 1/4·|0 − 0.5| + 2/4·|1 − 0.635| = 0.1 + 0.125 + 0.1825 = 0.4075
    expect(expectedCalibrationError(CHOICE)).toBeCloseTo(0.4075, 12);
  });

  it('bin edges: a boundary value goes up, 1 goes in the last bin', () => {
    const edge = obs('q', 'noul', ['true', 'false'], [
      [[0.3, 0.7], 1], // top 0.7 → [0.7, 0.8)
      [[1, 0], 0], // top 1 → [0.9, 1]
      [[0.5, 0.5], 0], // top 0.5 (tie → true) → [0.5, 0.6)
    ]);
    expect(reliabilityBins(edge).map((b) => b.count)).toEqual([0, 0, 0, 0, 0, 1, 0, 1, 0, 1]);
  });
});

// Five items of a score question with grades 0, 1, 2; score = Σ i·p.
//   item  p0   p1   p2   expected  score            |score − expected|
//   0     0.6  0.3  0.1  0         0.3 + 0.2 = 0.5   0.5
//   1     0.2  0.5  0.3  1         0.5 + 0.6 = 1.1   0.1
//   2     0.1  0.2  0.7  2         0.2 + 1.4 = 1.6   0.4
//   3     0.3  0.4  0.3  1         0.4 + 0.6 = 1.0   0.0
//   4     0.2  0.3  0.5  2         0.3 + 1.0 = 1.3   0.7
const SCORE = obs('s', 'score', ['0', '1', '2'], [
  [[0.6, 0.3, 0.1], 0],
  [[0.2, 0.5, 0.3], 1],
  [[0.1, 0.2, 0.7], 2],
  [[0.3, 0.4, 0.3], 1],
  [[0.2, 0.3, 0.5], 2],
]);

describe('score metrics on a hand fixture', () => {
  it('MAE of the score Σ i·p', () => {
    // (0.5 + 0.1 + 0.4 + 0 + 0.7) / 5 = 1.7 / 5 = 0.34
    expect(meanAbsoluteError(SCORE)).toBeCloseTo(0.34, 12);
  });

  it("Spearman's ρ with tied expected grades (average ranks)", () => {
    // expected [0, 1, 2, 1, 2] → ranks [1, 2.5, 4.5, 2.5, 4.5]; scores [0.5, 1.1, 1.6, 1.0, 1.3] → ranks [1, 3, 5, 2, 4]
    // deviations from 3: x [−2, −0.5, 1.5, −0.5, 1.5], y [−2, 0, 2, −1, 1]
    // Σxy = 4 + 0 + 3 + 0.5 + 1.5 = 9; Σx² = 4 + 0.25 + 2.25 + 0.25 + 2.25 = 9; Σy² = 4 + 0 + 4 + 1 + 1 = 10
    // ρ = 9 / √90 = 3 / √10 = 0.948683…
    expect(spearman(SCORE)).toBeCloseTo(3 / Math.sqrt(10), 12);
  });

  it('average ranks of ties', () => {
    expect(averageRanks([10, 20, 20, 30, 20])).toEqual([1, 3, 3, 5, 3]);
  });

  it('ρ is null for one item or no variance', () => {
    expect(spearman(SCORE.slice(0, 1))).toBeNull();
    const flat = SCORE.map((o) => ({ ...o, expected: 1 }));
    expect(spearman(flat)).toBeNull();
  });

  it('questionMetrics: score fields for score, F1 for the others; prediction sets', () => {
    const m = questionMetrics(SCORE);
    expect(m.macro_f1).toBeNull();
    expect(m.mae).toBeCloseTo(0.34, 12);
    expect(m.accuracy).toBe(1); // argmaxes 0, 1, 2, 1, 2 all right
    expect(m.prediction_sets).toBeNull();
    const c = questionMetrics(CHOICE, { alpha: 0.1, sets: [[0], [0], [1, 0], [0, 1]] });
    expect(c.mae).toBeNull();
    expect(c.spearman).toBeNull();
    expect(c.macro_f1).toBeCloseTo(7 / 18, 12);
    // covered: item 0 (a ∈ {a}), item 2 (b ∈ {b, a}); not item 1 (b ∉ {a}), item 3 (c ∉ {a, b}) → 2/4; sizes (1+1+2+2)/4
    expect(c.prediction_sets).toEqual({ alpha: 0.1, coverage: 0.5, mean_size: 1.5, cross_fold: false });
    expect(c.items).toBe(4);
    expect(c.mean_answer_mass).toBeNull();
  });

  it('questionMetrics: mean answer mass over the items that report it; refuses mixed answers', () => {
    const withMass = CHOICE.map((o, i) => ({ ...o, answerMass: i === 3 ? null : [0.2, 0.4, 0.9][i]! }));
    expect(questionMetrics(withMass).mean_answer_mass).toBeCloseTo(0.5, 12);
    expect(() => questionMetrics([...CHOICE, { ...CHOICE[0]!, answers: ['a', 'c', 'b'] }])).toThrow(/do not all have the answers/);
    expect(() => questionMetrics([])).toThrow(/at least one/);
  });
});
