// Fitting calibration (src/evaluation/calibration-fit.ts): a temperature and Platt's a, b are
// recovered from labels drawn at known values, within 3 standard errors that the test computes
// from the Fisher information; the profile's held-out numbers and conformal scores are what the
// definitions say; applying a profile offline checks what it applies to.
import { describe, expect, it } from 'vitest';
import { plattStandardErrors } from '../support/platt-fisher.ts';
import { questionFingerprint, type Question } from '../../src/contract/index.ts';
import { applyFit, sigmoid } from '../../src/engine/decision/calibration.ts';
import {
  applyProfile,
  expectedCalibrationError,
  fitPlatt,
  fitProfile,
  fitTemperature,
  logLoss,
  splitItems,
  type Observation,
} from '../../src/evaluation/index.ts';
import { Xoshiro128 } from '../../scripts/models/prng.ts';

function softmax(z: readonly number[]): number[] {
  const top = Math.max(...z);
  const e = z.map((x) => Math.exp(x - top));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}

/** An index drawn from a categorical distribution with one uniform draw. */
function draw(p: readonly number[], u: number): number {
  let c = 0;
  for (let i = 0; i < p.length; i++) {
    c += p[i]!;
    if (u < c) return i;
  }
  return p.length - 1;
}

/** n items of K answers: logits z ~ scale·N(0, 1), the model says softmax(z), the labels come from softmax(z / T0). */
function temperatureSet(n: number, k: number, t0: number, seed: number, scale = 2): { observations: Observation[]; logits: number[][] } {
  const rng = new Xoshiro128(seed);
  const logits: number[][] = [];
  const observations: Observation[] = [];
  for (let item = 0; item < n; item++) {
    const z = Array.from({ length: k }, () => scale * rng.nextNormal());
    logits.push(z);
    const expected = draw(softmax(z.map((x) => x / t0)), rng.nextFloat());
    observations.push({
      item,
      key: 'q',
      type: 'choice',
      answers: Array.from({ length: k }, (_, i) => `o${i}`),
      probabilities: softmax(z),
      expected,
      answerMass: null,
      latencyMs: 0,
    });
  }
  return { observations, logits };
}

/** Mean NLL of the expected answers under softmax(z / T), computed directly from the logits. */
function nll(logits: number[][], observations: Observation[], t: number): number {
  return logits.reduce((s, z, i) => s - Math.log(softmax(z.map((x) => x / t))[observations[i]!.expected]!), 0) / logits.length;
}

describe('fitTemperature', () => {
  for (const t0 of [0.5, 2]) {
    it(`recovers T0 = ${t0} within 3 standard errors (n = 3000, 4 answers)`, () => {
      const n = 3000;
      const { observations, logits } = temperatureSet(n, 4, t0, 17 + t0 * 10);
      const t = fitTemperature(observations);
      // β = 1/T is the MLE's parameter; the Fisher information of one item at β0 is the variance
      // of the logit z under q = softmax(β0 z): I(β0) = E_q[z²] − E_q[z]². SE(β̂) = 1/√(n·Ī), and
      // by the delta method SE(T̂) = SE(β̂) / β0².
      const beta0 = 1 / t0;
      const info =
        logits.reduce((s, z) => {
          const q = softmax(z.map((x) => beta0 * x));
          const m1 = q.reduce((a, qi, i) => a + qi * z[i]!, 0);
          const m2 = q.reduce((a, qi, i) => a + qi * z[i]! * z[i]!, 0);
          return s + (m2 - m1 * m1);
        }, 0) / n;
      const seT = 1 / Math.sqrt(n * info) / (beta0 * beta0);
      expect(Math.abs(t - t0)).toBeLessThanOrEqual(3 * seT);
      expect(seT).toBeLessThan(0.1 * t0); // the bound is informative, not vacuous
      // The fit is the minimum of the NLL (checked directly on the logits, not through the fit's code).
      expect(nll(logits, observations, t)).toBeLessThan(nll(logits, observations, t * 1.001));
      expect(nll(logits, observations, t)).toBeLessThan(nll(logits, observations, t / 1.001));
    });
  }

  it('keeps zero probabilities at zero and ignores items whose expected answer has p = 0', () => {
    const base = temperatureSet(400, 3, 0.5, 5).observations;
    // A fourth answer with p = 0 everywhere, and an item whose expected answer had p = 0.
    const padded = base.map((o) => ({ ...o, answers: [...o.answers, 'never'], probabilities: [...o.probabilities, 0] }));
    const impossible: Observation = { ...padded[0]!, item: 400, expected: 3 };
    const t = fitTemperature([...padded, impossible]);
    expect(t).toBeCloseTo(fitTemperature(base), 10);
    expect(applyFit(padded[0]!.probabilities, { method: 'temperature', temperature: t })[3]).toBe(0);
  });

  it('is 1 when the probabilities tell nothing (all uniform), and clamps to [0.01, 100]', () => {
    const uniform = temperatureSet(50, 3, 1, 9).observations.map((o) => ({ ...o, probabilities: [1 / 3, 1 / 3, 1 / 3] }));
    expect(fitTemperature(uniform)).toBe(1);
    // Always right: sharper is always better, β runs to its bound 100 (T = 0.01).
    const right = temperatureSet(50, 3, 1, 9).observations.map((o) => ({ ...o, expected: o.probabilities.indexOf(Math.max(...o.probabilities)) }));
    expect(fitTemperature(right)).toBeCloseTo(0.01, 12);
  });
});

describe('fitPlatt', () => {
  it('recovers a, b within 3 standard errors (n = 3000)', () => {
    const n = 3000;
    const [a0, b0] = [0.6, 0.4];
    const rng = new Xoshiro128(99);
    const observations: Observation[] = [];
    const xs: number[] = [];
    for (let item = 0; item < n; item++) {
      const x = 2.5 * rng.nextNormal(); // the model's logit of p(true)
      xs.push(x);
      const y = rng.nextFloat() < sigmoid(a0 * x + b0);
      const p = sigmoid(x);
      observations.push({ item, key: 'n', type: 'noul', answers: ['true', 'false'], probabilities: [p, 1 - p], expected: y ? 0 : 1, answerMass: null, latencyMs: 0 });
    }
    const { a, b } = fitPlatt(observations);
    // 3 standard errors from the Fisher information at the true (a0, b0).
    const { seA, seB } = plattStandardErrors(xs, a0, b0);
    expect(Math.abs(a - a0)).toBeLessThanOrEqual(3 * seA);
    expect(Math.abs(b - b0)).toBeLessThanOrEqual(3 * seB);
    expect(seA).toBeLessThan(0.05);
  });

  it('stays finite on separable data, and separates', () => {
    const observations: Observation[] = [0.9, 0.8, 0.7, 0.3, 0.2, 0.1].map((p, item) => ({
      item,
      key: 'n',
      type: 'noul',
      answers: ['true', 'false'],
      probabilities: [p, 1 - p],
      expected: p > 0.5 ? 0 : 1,
      answerMass: null,
      latencyMs: 0,
    }));
    const { a, b } = fitPlatt(observations);
    expect(Number.isFinite(a) && Number.isFinite(b)).toBe(true);
    expect(a).toBeGreaterThan(1); // sharper than the identity: every item is right
    const fitted = observations.map((o) => applyFit(o.probabilities, { method: 'platt', a, b })[0]!);
    expect(fitted.slice(0, 3).every((p) => p > 0.99)).toBe(true);
    expect(fitted.slice(3).every((p) => p < 0.01)).toBe(true);
  });
});

describe('splitItems', () => {
  it('is seeded, disjoint and complete', () => {
    const a = splitItems(101, { holdout: 0.3, seed: 7 });
    expect(a).toEqual(splitItems(101, { holdout: 0.3, seed: 7 }));
    expect(a).not.toEqual(splitItems(101, { holdout: 0.3, seed: 8 }));
    expect(a.holdout).toHaveLength(30); // round(30.3)
    expect([...a.fit, ...a.holdout].sort((x, y) => x - y)).toEqual(Array.from({ length: 101 }, (_, i) => i));
    expect(a.fit).toEqual([...a.fit].sort((x, y) => x - y));
    expect(splitItems(10).holdout).toHaveLength(5);
    expect(() => splitItems(10, { holdout: 1.5 })).toThrow(/holdout/);
  });
});

const CHOICE_Q: Question = { type: 'choice', instructions: 'Pick one.', criteria: { o0: null, o1: null, o2: null, o3: null } };
const NOUL_Q: Question = { type: 'noul', instructions: 'Is it?', criteria: { true: null, false: null } };

describe('fitProfile', () => {
  const choice = temperatureSet(600, 4, 2, 3).observations;
  const rng = new Xoshiro128(4);
  const noul: Observation[] = choice.map((o) => {
    const p = sigmoid(3 * rng.nextNormal());
    return { ...o, key: 'n', type: 'noul', answers: ['true', 'false'], probabilities: [p, 1 - p], expected: rng.nextFloat() < sigmoid(0.5 * Math.log(p / (1 - p))) ? 0 : 1 };
  });
  const questions = { q: CHOICE_Q, n: NOUL_Q };
  const { profile, fitItems, holdoutItems, notes } = fitProfile({ id: 'p1', model: 'm@1', calibrate: false, questions, observations: [...choice, ...noul], holdout: 0.4, seed: 3 });

  it('fits a temperature on the fit items and reports the held-out before and after', () => {
    expect(holdoutItems).toEqual(splitItems(600, { holdout: 0.4, seed: 3 }).holdout);
    expect(fitItems).toEqual(splitItems(600, { holdout: 0.4, seed: 3 }).fit);
    const entry = profile.questions[questionFingerprint(CHOICE_Q)]!;
    expect(entry.key).toBe('q');
    expect(entry.answers).toEqual(['o0', 'o1', 'o2', 'o3']);
    expect(entry.fit_items).toBe(360);
    const fitSet = new Set(fitItems);
    expect(entry.fit).toEqual({ method: 'temperature', temperature: fitTemperature(choice.filter((o) => fitSet.has(o.item))) });
    const t = (entry.fit as { temperature: number }).temperature;
    expect(t).toBeGreaterThan(1.5); // the labels were drawn at T = 2
    const held = choice.filter((o) => !fitSet.has(o.item));
    const after = held.map((o) => ({ ...o, probabilities: softmax(o.probabilities.map((p) => Math.log(p) / t)) }));
    expect(entry.holdout!.items).toBe(240);
    expect(entry.holdout!.ece_before).toBeCloseTo(expectedCalibrationError(held), 12);
    expect(entry.holdout!.ece_after).toBeCloseTo(expectedCalibrationError(after), 12);
    expect(entry.holdout!.log_loss_before).toBeCloseTo(logLoss(held), 12);
    expect(entry.holdout!.log_loss_after).toBeCloseTo(logLoss(after), 12);
    expect(entry.holdout!.log_loss_after).toBeLessThan(entry.holdout!.log_loss_before);
    // Conformal scores: 1 − p'(expected) of the held-out items, ascending.
    const scores = after.map((o) => 1 - o.probabilities[o.expected]!).sort((a, b) => a - b);
    expect(entry.conformal!.scores).toHaveLength(240);
    entry.conformal!.scores.forEach((s, i) => expect(s).toBeCloseTo(scores[i]!, 12));
    expect(notes).toEqual([]);
  });

  it('fits Platt scaling for noul', () => {
    const entry = profile.questions[questionFingerprint(NOUL_Q)]!;
    expect(entry.type).toBe('noul');
    expect(entry.fit.method).toBe('platt');
    const { a } = entry.fit as { a: number; b: number };
    expect(a).toBeGreaterThan(0.3); // drawn at a = 0.5
    expect(a).toBeLessThan(0.7);
    expect(entry.holdout!.log_loss_after).toBeLessThan(entry.holdout!.log_loss_before);
  });

  it('gives the identity to a question with fewer than 2 fit items, and says so', () => {
    const few = choice.slice(0, 3);
    const result = fitProfile({ id: 'p2', model: 'm', calibrate: true, questions: { q: CHOICE_Q }, observations: few, holdout: 0.7, seed: 1 });
    const entry = result.profile.questions[questionFingerprint(CHOICE_Q)]!;
    expect(entry.fit).toEqual({ method: 'identity' });
    expect(entry.fit_items).toBe(1);
    expect(result.notes.join()).toMatch(/"q": 1 fit item.*identity/);
    expect(result.profile.calibrate).toBe(true);
  });

  it('notes a temperature at the end of its range and a fit that hurt the held-out log loss', () => {
    // Fit items always right (their labels are the argmax): β runs to 100, T = 0.01. The held-out
    // items are labelled with their least probable answer: the sharpened fit makes them worse.
    const split = splitItems(40, { holdout: 0.5, seed: 2 });
    const held = new Set(split.holdout);
    const observations = choice.slice(0, 40).map((o) => {
      const order = o.probabilities.map((p, k) => [p, k] as const).sort((a, b) => b[0] - a[0]);
      return { ...o, expected: held.has(o.item) ? order.at(-1)![1] : order[0]![1] };
    });
    const result = fitProfile({ id: 'p3', model: 'm', calibrate: false, questions: { q: CHOICE_Q }, observations, holdout: 0.5, seed: 2 });
    const entry = Object.values(result.profile.questions)[0]!;
    expect(entry.fit).toEqual({ method: 'temperature', temperature: 0.01 });
    expect(result.notes).toHaveLength(2);
    expect(result.notes[0]).toMatch(/"q": the temperature reached the end of its range \(T = 0.01\)/);
    expect(result.notes[1]).toMatch(/"q": the fit made the held-out log loss worse/);
    expect(entry.holdout!.log_loss_after).toBeGreaterThan(entry.holdout!.log_loss_before);
  });

  it('applyProfile maps each observation and names a question the profile lacks', () => {
    const { observations, sets } = applyProfile(choice.slice(0, 5), profile, questions, null);
    const t = (profile.questions[questionFingerprint(CHOICE_Q)]!.fit as { temperature: number }).temperature;
    observations.forEach((o, i) => {
      const direct = softmax(choice[i]!.probabilities.map((p) => Math.log(p) / t));
      o.probabilities.forEach((p, k) => expect(p).toBeCloseTo(direct[k]!, 12));
    });
    expect(sets).toBeNull();
    const other: Question = { ...CHOICE_Q, instructions: 'Another question.' };
    expect(() => applyProfile(choice.slice(0, 1), profile, { q: other }, null)).toThrow(/no entry for question "q"/);
    expect(() => applyProfile(choice.slice(0, 1), profile, {}, null)).toThrow(/"q"/);
    const renamed = choice.slice(0, 1).map((o) => ({ ...o, answers: ['x0', 'o1', 'o2', 'o3'] }));
    expect(() => applyProfile(renamed, profile, questions, null)).toThrow(/answers/);
  });
});
