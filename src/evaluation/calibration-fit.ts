/**
 * Fitting a calibration profile from labelled observations (docs/evaluation.md, "Fitted
 * calibration"): per question a temperature (choice, score) or Platt scaling (noul), fitted by
 * maximum likelihood on one part of the items, checked on the held-out rest, whose nonconformity
 * scores then calibrate split-conformal prediction sets. The maps are src/engine/decision/calibration.ts's,
 * the very functions the engine applies a profile with.
 */
import {
  calibrationProfileSchema,
  questionFingerprint,
  type CalibrationProfile,
  type Question,
  type QuestionFit,
  type QuestionProfile,
} from '../contract/index.ts';
import { applyFit, conformalThreshold, logit, nonconformity, predictionSet, sigmoid } from '../engine/decision/calibration.ts';
import { expectedCalibrationError, logLoss } from './metrics.ts';
import { seededPermutation } from '../engine/runtime/seeded-random.ts';
import type { Observation } from './types.ts';

/** The inverse temperature β = 1 / T is searched in [1/100, 100]. */
export const BETA_RANGE = [1 / 100, 100] as const;
/** The L2 ridge of Platt scaling, on the mean log loss: it keeps a and b finite on separable data. */
export const PLATT_RIDGE = 1e-6;

/**
 * The temperature T that minimises the mean negative log-likelihood of the expected answers under
 * softmax(log p / T). Parametrised by β = 1 / T, the NLL
 *   L(β) = mean[ −β·ℓ_y + ln Σₖ exp(β·ℓₖ) ],  ℓ = log p,
 * is convex (L'' = mean Var_q(ℓ) ≥ 0, q = softmax(β·ℓ)), so Newton's method on L' = 0, kept
 * inside a shrinking bracket (bisection when a step leaves it), finds its minimum on
 * β ∈ [1/100, 100]. Answers with p = 0 (ℓ = −∞) keep probability 0 at every T and are left out;
 * an item whose expected answer has p = 0 has infinite loss at every T and tells nothing about T,
 * so it is left out too. With no information (L flat) T = 1.
 */
export function fitTemperature(observations: readonly Observation[]): number {
  const rows = observations.flatMap((o) => {
    if (!(o.probabilities[o.expected]! > 0)) return [];
    const logs = o.probabilities.flatMap((p) => (p > 0 ? [Math.log(p)] : []));
    return [{ logs, expected: Math.log(o.probabilities[o.expected]!) }];
  });
  if (rows.length === 0) return 1;
  /** L'(β) and L''(β). */
  const derivatives = (beta: number): [number, number] => {
    let g = 0;
    let h = 0;
    for (const { logs, expected } of rows) {
      const top = Math.max(...logs);
      let z = 0;
      let m1 = 0;
      let m2 = 0;
      for (const l of logs) {
        const w = Math.exp(beta * (l - top));
        z += w;
        m1 += w * l;
        m2 += w * l * l;
      }
      const mean = m1 / z;
      g += mean - expected;
      h += Math.max(0, m2 / z - mean * mean);
    }
    return [g / rows.length, h / rows.length];
  };
  let lo: number = BETA_RANGE[0];
  let hi: number = BETA_RANGE[1];
  const gLo = derivatives(lo)[0];
  const gHi = derivatives(hi)[0];
  if (gLo >= 0 && gHi <= 0) return 1; // L' is nondecreasing: it is 0 throughout, L is flat
  if (gLo >= 0) return 1 / lo;
  if (gHi <= 0) return 1 / hi;
  let beta = 1;
  for (let iteration = 0; iteration < 200; iteration++) {
    const [g, h] = derivatives(beta);
    if (g === 0) break;
    if (g > 0) hi = beta;
    else lo = beta;
    let next = h > 0 ? beta - g / h : Number.NaN;
    if (!(next > lo && next < hi)) next = (lo + hi) / 2;
    const converged = Math.abs(next - beta) <= 1e-13 * beta;
    beta = next;
    if (converged || hi - lo <= 1e-13 * beta) break;
  }
  return 1 / beta;
}

/**
 * Platt scaling for a noul question: the logistic regression y ~ σ(a · logit p(true) + b), with
 * y = 1 when the expected answer is `true`, fitted by Newton's method (IRLS) with a backtracking
 * line search, minimising the mean log loss plus (1e-6 / 2)·(a² + b²); the tiny ridge keeps a and
 * b finite when the data are separable. Starts from the identity (a = 1, b = 0).
 */
export function fitPlatt(observations: readonly Observation[]): { a: number; b: number } {
  const x = observations.map((o) => logit(o.probabilities[0]!));
  const y = observations.map((o) => (o.expected === 0 ? 1 : 0));
  const n = x.length;
  if (n === 0) return { a: 1, b: 0 };
  const objective = (a: number, b: number): number => {
    let s = 0;
    for (let i = 0; i < n; i++) {
      const z = a * x[i]! + b;
      s += softplus(z) - y[i]! * z; // −y ln σ(z) − (1 − y) ln(1 − σ(z))
    }
    return s / n + (PLATT_RIDGE / 2) * (a * a + b * b);
  };
  let a = 1;
  let b = 0;
  let f = objective(a, b);
  for (let iteration = 0; iteration < 100; iteration++) {
    let ga = 0;
    let gb = 0;
    let haa = 0;
    let hab = 0;
    let hbb = 0;
    for (let i = 0; i < n; i++) {
      const s = sigmoid(a * x[i]! + b);
      const r = s - y[i]!;
      const w = s * (1 - s);
      ga += r * x[i]!;
      gb += r;
      haa += w * x[i]! * x[i]!;
      hab += w * x[i]!;
      hbb += w;
    }
    ga = ga / n + PLATT_RIDGE * a;
    gb = gb / n + PLATT_RIDGE * b;
    haa = haa / n + PLATT_RIDGE;
    hab /= n;
    hbb = hbb / n + PLATT_RIDGE;
    if (Math.max(Math.abs(ga), Math.abs(gb)) < 1e-12) break;
    const det = haa * hbb - hab * hab;
    const da = (hbb * ga - hab * gb) / det;
    const db = (haa * gb - hab * ga) / det;
    const slope = ga * da + gb * db; // > 0: the Hessian is positive definite
    let t = 1;
    let next = objective(a - da, b - db);
    while (next > f - 1e-4 * t * slope && t > 1e-10) {
      t /= 2;
      next = objective(a - t * da, b - t * db);
    }
    if (next > f) break; // no descent left at double precision
    a -= t * da;
    b -= t * db;
    const improvement = f - next;
    f = next;
    if (improvement <= 1e-16 * Math.max(1, f)) break;
  }
  return { a, b };
}

function softplus(z: number): number {
  return Math.max(z, 0) + Math.log1p(Math.exp(-Math.abs(z)));
}

/**
 * A seeded, deterministic split of the items 0..itemCount−1: round(itemCount · holdout) of them,
 * chosen by a seeded shuffle, are held out; the rest are fitted on. Both lists ascending.
 */
export function splitItems(itemCount: number, options: { holdout?: number; seed?: number } = {}): { fit: number[]; holdout: number[] } {
  const holdout = options.holdout ?? 0.5;
  if (!(holdout >= 0 && holdout <= 1)) throw new RangeError(`holdout is the share of items held out, from 0 to 1, not ${holdout}`);
  const order = seededPermutation(itemCount, options.seed ?? 1);
  const count = Math.round(itemCount * holdout);
  return { holdout: order.slice(0, count).sort((a, b) => a - b), fit: order.slice(count).sort((a, b) => a - b) };
}

export interface FitProfileOptions {
  id: string;
  /** The model version that produced the observations (`DecisionResponse.model`). */
  model: string;
  /** Whether the observations' requests had `calibrate` on. */
  calibrate: boolean;
  /** Question key → the normalized question (its fingerprint keys the profile). */
  questions: Record<string, Question>;
  observations: readonly Observation[];
  /** Share of the items held out (default 0.5). */
  holdout?: number;
  /** Seed of the split (default 1). */
  seed?: number;
  /** Items of the set (default: the highest item index observed + 1); the split is over 0..itemCount−1. */
  itemCount?: number;
}

/**
 * Fits a calibration profile: per question key that is in `questions` and observed, Platt scaling
 * (noul) or a temperature (choice, score) on the fit items' observations; on the held-out items,
 * the ECE and log loss before and after the fit, and the conformal scores
 * 1 − p'(expected) after the fit, ascending. A question with fewer than 2 fit items gets the
 * identity fit, and a note says so; notes also flag a temperature at the end of its range and a
 * fit that made the held-out log loss worse.
 */
export function fitProfile(options: FitProfileOptions): {
  profile: CalibrationProfile;
  fitItems: number[];
  holdoutItems: number[];
  notes: string[];
} {
  const itemCount = options.itemCount ?? options.observations.reduce((m, o) => Math.max(m, o.item + 1), 0);
  const split = splitItems(itemCount, { ...(options.holdout === undefined ? {} : { holdout: options.holdout }), ...(options.seed === undefined ? {} : { seed: options.seed }) });
  const fitSet = new Set(split.fit);
  const holdoutSet = new Set(split.holdout);
  const notes: string[] = [];
  const questions: Record<string, QuestionProfile> = {};
  for (const [key, observations] of byKey(options.observations)) {
    const question = Object.hasOwn(options.questions, key) ? options.questions[key]! : null;
    if (question === null) continue;
    const first = observations[0]!;
    if (first.type !== question.type) throw new Error(`question "${key}" is ${question.type} but its observations are ${first.type}`);
    const fitObservations = observations.filter((o) => fitSet.has(o.item));
    const held = observations.filter((o) => holdoutSet.has(o.item));
    let fit: QuestionFit;
    if (fitObservations.length < 2) {
      fit = { method: 'identity' };
      notes.push(`question "${key}": ${fitObservations.length} fit item(s), fewer than 2: identity fit`);
    } else if (question.type === 'noul') {
      fit = { method: 'platt', ...fitPlatt(fitObservations) };
    } else {
      const temperature = fitTemperature(fitObservations);
      fit = { method: 'temperature', temperature };
      if (temperature <= (1 / BETA_RANGE[1]) * (1 + 1e-9) || temperature >= (1 / BETA_RANGE[0]) * (1 - 1e-9)) {
        notes.push(
          `question "${key}": the temperature reached the end of its range (T = ${temperature}): the fit items ${temperature < 1 ? 'never contradict' : 'hardly follow'} the most probable answer; more labelled items would tell`,
        );
      }
    }
    const after = held.map((o) => ({ ...o, probabilities: applyFit(o.probabilities, fit) }));
    if (held.length > 0 && logLoss(after) > logLoss(held)) {
      notes.push(`question "${key}": the fit made the held-out log loss worse (${logLoss(held).toFixed(4)} → ${logLoss(after).toFixed(4)})`);
    }
    questions[questionFingerprint(question)] = {
      key,
      type: question.type,
      answers: [...first.answers],
      fit,
      conformal:
        held.length > 0
          ? { scores: after.map((o) => Math.min(1, Math.max(0, nonconformity(o.probabilities, o.expected)))).sort((a, b) => a - b) }
          : null,
      fit_items: fitObservations.length,
      holdout:
        held.length > 0
          ? {
              items: held.length,
              ece_before: expectedCalibrationError(held),
              ece_after: expectedCalibrationError(after),
              log_loss_before: logLoss(held),
              log_loss_after: logLoss(after),
            }
          : null,
    };
  }
  const profile = calibrationProfileSchema.parse({
    object: 'calibration_profile',
    id: options.id,
    model: options.model,
    calibrate: options.calibrate,
    created: new Date().toISOString(),
    questions,
  });
  return { profile, fitItems: split.fit, holdoutItems: split.holdout, notes };
}

/**
 * Applies a profile to observations offline, exactly as the engine applies it to an answer: the
 * entry of each observation's question (by fingerprint) must hold the same set of answers; its fit
 * maps the probabilities (in the profile's answer order); with alpha, the prediction set is every
 * answer whose 1 − p' is within the conformal threshold of the entry's scores (never empty).
 * Throws an Error naming the key of a question the profile lacks (or, with alpha, lacks scores for).
 */
export function applyProfile(
  observations: readonly Observation[],
  profile: CalibrationProfile,
  questions: Record<string, Question>,
  alpha: number | null,
): { observations: Observation[]; sets: number[][] | null } {
  const thresholds = new Map<string, number>();
  const fingerprints = new Map<string, string>();
  const sets: number[][] = [];
  const mapped = observations.map((o) => {
    const question = Object.hasOwn(questions, o.key) ? questions[o.key]! : null;
    if (question === null) throw new Error(`no question "${o.key}" was given to apply profile "${profile.id}" to`);
    let fingerprint = fingerprints.get(o.key);
    if (fingerprint === undefined) {
      fingerprint = questionFingerprint(question);
      fingerprints.set(o.key, fingerprint);
    }
    const entry = Object.hasOwn(profile.questions, fingerprint) ? profile.questions[fingerprint]! : null;
    if (entry === null) throw new Error(`profile "${profile.id}" has no entry for question "${o.key}" (fingerprint ${fingerprint})`);
    const same = entry.answers.length === o.answers.length && o.answers.every((a) => entry.answers.includes(a));
    if (!same) {
      throw new Error(`profile "${profile.id}" fitted question "${o.key}" with the answers ${entry.answers.join(', ')}, not ${o.answers.join(', ')}`);
    }
    const inProfileOrder = applyFit(
      entry.answers.map((a) => o.probabilities[o.answers.indexOf(a)]!),
      entry.fit,
    );
    const probabilities = o.answers.map((a) => inProfileOrder[entry.answers.indexOf(a)]!);
    if (alpha !== null) {
      let threshold = thresholds.get(o.key);
      if (threshold === undefined) {
        const scores = entry.conformal?.scores ?? [];
        if (scores.length === 0) throw new Error(`profile "${profile.id}" has no conformal scores for question "${o.key}"`);
        threshold = conformalThreshold([...scores].sort((a, b) => a - b), alpha);
        thresholds.set(o.key, threshold);
      }
      sets.push(predictionSet(probabilities, threshold));
    }
    return { ...o, probabilities };
  });
  return { observations: mapped, sets: alpha === null ? null : sets };
}

/** Observations grouped by question key, keys in first-seen order. */
export function byKey(observations: readonly Observation[]): Map<string, Observation[]> {
  const groups = new Map<string, Observation[]>();
  for (const o of observations) {
    const group = groups.get(o.key);
    if (group) group.push(o);
    else groups.set(o.key, [o]);
  }
  return groups;
}
