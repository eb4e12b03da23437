// Split-conformal prediction sets: the threshold and set rules of src/engine/decision/calibration.ts on hand
// fixtures, and the coverage guarantee on synthetic data drawn exchangeably, through a profile
// fitted by src/evaluation (fitProfile) and applied offline (applyProfile).
import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/contract/index.ts';
import { conformalThreshold, predictionSet } from '../../src/engine/decision/calibration.ts';
import { applyProfile, fitProfile, type Observation } from '../../src/evaluation/index.ts';
import { crossFoldSets } from '../../src/evaluation/evaluate.ts';
import { Xoshiro128 } from '../../scripts/models/prng.ts';

describe('conformal threshold and set rules', () => {
  it('takes the ⌈(n + 1)(1 − α)⌉-th smallest score', () => {
    const scores = [0.1, 0.2, 0.3, 0.4];
    expect(conformalThreshold(scores, 0.2)).toBe(0.4); // ⌈5 · 0.8⌉ = 4
    expect(conformalThreshold(scores, 0.5)).toBe(0.3); // ⌈5 · 0.5⌉ = 3 (2.5 rounds up)
    expect(conformalThreshold(scores, 0.6)).toBe(0.2); // ⌈5 · 0.4⌉ = 2
    expect(conformalThreshold(scores, 0.1)).toBe(Infinity); // ⌈5 · 0.9⌉ = 5 > 4: too few scores
    expect(conformalThreshold([], 0.5)).toBe(Infinity);
  });

  it('keeps every answer with 1 − p ≤ q̂, and never returns an empty set', () => {
    const p = [0.5, 0.3, 0.2]; // scores 0.5, 0.7, 0.8
    expect(predictionSet(p, 0.5)).toEqual([0]); // 0.5 ≤ 0.5
    expect(predictionSet(p, 0.75)).toEqual([0, 1]);
    expect(predictionSet(p, Infinity)).toEqual([0, 1, 2]);
    expect(predictionSet(p, 0.1)).toEqual([0]); // none qualifies: the most probable
    expect(predictionSet([0.2, 0.4, 0.4], 0.1)).toEqual([1]); // a tie: the first of the most probable
  });
});

const K = 5;
const QUESTION: Question = { type: 'choice', instructions: 'Which one?', criteria: Object.fromEntries(Array.from({ length: K }, (_, i) => [`o${i}`, null])) };

function softmax(z: readonly number[]): number[] {
  const top = Math.max(...z);
  const e = z.map((x) => Math.exp(x - top));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/**
 * n exchangeable items: the model's probabilities are softmax(z) with z ~ 2.5·N(0, 1) per answer;
 * the labels come from a different, miscalibrated distribution, softmax(z / 3) with a shifted
 * favourite (the model is overconfident and often wrong), so the sets must grow to cover.
 */
function items(n: number, rng: Xoshiro128, first: number): Observation[] {
  return Array.from({ length: n }, (_, i) => {
    const z = Array.from({ length: K }, () => 2.5 * rng.nextNormal());
    const truth = softmax(z.map((x, k) => x / 3 + (k === 0 ? 1 : 0)));
    let u = rng.nextFloat();
    let expected = K - 1;
    for (let k = 0; k < K; k++) {
      u -= truth[k]!;
      if (u < 0) {
        expected = k;
        break;
      }
    }
    return {
      item: first + i,
      key: 'q',
      type: 'choice',
      answers: Object.keys(QUESTION.criteria),
      probabilities: softmax(z),
      expected,
      answerMass: null,
      latencyMs: 0,
    };
  });
}

describe('split-conformal coverage (n_cal = 500, n_test = 2000)', () => {
  // Given the calibration scores, each test item is covered independently with probability c,
  // where c is Beta-distributed over calibration sets with mean ⌈(n+1)(1−α)⌉/(n+1) ≥ 1 − α and
  // variance ≤ α(1−α)/(n+2) (+ O(1/n²)); the empirical coverage of n_test items adds the binomial
  // α(1−α)/n_test. One run: coverage ≥ 1 − α − 3·√(α(1−α)·(1/n_test + 1/(n_cal+2))). The mean over
  // R = 10 independent runs: ≥ 1 − α − 3·√(α(1−α)/n_test), since (1/n_test + 1/(n_cal+2))/R is
  // below 1/n_test for R ≥ 5.
  const nCal = 500;
  const nTest = 2000;
  const runs = 10;
  for (const alpha of [0.05, 0.1, 0.2]) {
    it(`α = ${alpha}: coverage at least 1 − α within the binomial bound`, () => {
      const coverages: number[] = [];
      const sizes: number[] = [];
      for (let r = 0; r < runs; r++) {
        const rng = new Xoshiro128(1000 * r + Math.round(alpha * 100));
        // 1000 labelled items: half fit the temperature, half (500) are held out for the scores.
        const labelled = items(2 * nCal, rng, 0);
        const { profile } = fitProfile({ id: 'conformal', model: 'synthetic', calibrate: false, questions: { q: QUESTION }, observations: labelled, holdout: 0.5, seed: r + 1 });
        expect(Object.values(profile.questions)[0]!.conformal!.scores).toHaveLength(nCal);
        const test = items(nTest, rng, 2 * nCal);
        const { sets } = applyProfile(test, profile, { q: QUESTION }, alpha);
        const covered = test.filter((o, i) => sets![i]!.includes(o.expected)).length / nTest;
        coverages.push(covered);
        sizes.push(sets!.reduce((s, set) => s + set.length, 0) / nTest);
        const oneRun = 1 - alpha - 3 * Math.sqrt(alpha * (1 - alpha) * (1 / nTest + 1 / (nCal + 2)));
        expect(covered).toBeGreaterThanOrEqual(oneRun);
      }
      const meanCoverage = coverages.reduce((a, b) => a + b, 0) / runs;
      expect(meanCoverage).toBeGreaterThanOrEqual(1 - alpha - 3 * Math.sqrt((alpha * (1 - alpha)) / nTest));
      // Not trivially covered by sets of every answer: the sets are informative, and (with a
      // model that is often wrong) larger than one answer.
      const meanSize = sizes.reduce((a, b) => a + b, 0) / runs;
      if (alpha === 0.2) expect(meanSize).toBeLessThan(K);
      expect(meanSize).toBeGreaterThan(1);
      expect(meanCoverage).toBeLessThan(1);
    });
  }

  it('the model alone (top answer) would not cover 1 − α', () => {
    const test = items(nTest, new Xoshiro128(5), 0);
    const topRight = test.filter((o) => o.probabilities.indexOf(Math.max(...o.probabilities)) === o.expected).length / nTest;
    expect(topRight).toBeLessThan(0.8);
  });
});

describe('crossFoldSets: out-of-sample sets on the held-out rerun', () => {
  it('gives each half the threshold of the other half (hand-computed)', () => {
    const o = (item: number, probabilities: number[], expected: number): Observation => ({
      item, key: 'q', type: 'noul', answers: ['true', 'false'], probabilities, expected, answerMass: null, latencyMs: 0,
    });
    // Scores 1 − p(expected): even positions 0.1, 0.7 → q̂ = 2nd smallest (⌈3 · 0.5⌉ = 2) = 0.7;
    // odd positions 0.6, 0.2 → q̂ = 0.6. Even items use 0.6, odd items use 0.7:
    // i0 [0.9, 0.1]: 0.1 ≤ 0.6, 0.9 > 0.6 → {0}; i2 [0.3, 0.7]: 0.7 > 0.6, 0.3 ≤ 0.6 → {1};
    // i1 [0.6, 0.4]: 0.4 ≤ 0.7, 0.6 ≤ 0.7 → {0, 1}; i3 [0.8, 0.2]: 0.2 ≤ 0.7, 0.8 > 0.7 → {0}.
    const obs = [o(0, [0.9, 0.1], 0), o(1, [0.6, 0.4], 1), o(2, [0.3, 0.7], 0), o(3, [0.8, 0.2], 0)];
    expect(crossFoldSets(obs, 0.5)).toEqual([[0], [0, 1], [1], [0]]);
  });
});
