/**
 * Running a labelled set through a decision engine and measuring it (docs/evaluation.md): each
 * mode (calibrate off and on by default, or given profiles) sends every item's request, one at a
 * time, through `decide` — the facade's `decisions.create` in the playground and the CLI — and
 * scores the answers. With `fit`, a calibration profile is fitted on the first plain mode's
 * answers and the held-out items are sent again with it, so the engine's own code applies it.
 */
import {
  questionFingerprint,
  type CalibrationProfile,
  type DecisionRequestInput,
  type DecisionResponse,
  type Question,
} from '../contract/index.ts';
import { conformalThreshold, nonconformity, predictionSet } from '../engine/decision/calibration.ts';
import { fitProfile, splitItems, byKey } from './calibration-fit.ts';
import { DatasetError } from './dataset-error.ts';
import { expectedLabel } from './dataset-label.ts';
import { argmax, questionMetrics } from './metrics.ts';
import { observe, requestQuestions } from './observe.ts';
import type { EvalItem, EvaluationMode, EvaluationProgress, EvaluationReport, ItemError, Observation, WrongAnswer } from './types.ts';

export interface EvaluationModeOptions {
  /** `calibrate` sent with every request. */
  calibrate: boolean;
  /** A profile sent inline as `calibration` with every request. */
  profile?: CalibrationProfile | null;
  /** With a profile: `prediction_set: { alpha }` sent with every request. */
  alpha?: number | null;
}

export interface EvaluationOptions {
  items: EvalItem[];
  /** A name for the data (the file name), reported. */
  dataName: string;
  /** Answers one decision request: the facade's `client.decisions.create`. */
  decide: (request: DecisionRequestInput, options: { signal?: AbortSignal }) => Promise<DecisionResponse>;
  /** Default: calibrate off, then on (side by side). */
  modes?: EvaluationModeOptions[];
  /**
   * Fit a profile `id` on the first mode without a profile (calibrate off by preference), holding
   * out `holdout` (default 0.5) of the items chosen with `seed` (default 1), then send the held-out
   * items again with it (and `prediction_set: { alpha }` when alpha is given).
   */
  fit?: { id: string; holdout?: number; seed?: number; alpha?: number } | null;
  signal?: AbortSignal;
  onProgress?: (progress: EvaluationProgress) => void;
  /** Each mode's observations once its pass ends (the CLI writes them to observations.jsonl). */
  onObservations?: (mode: number, observations: readonly Observation[]) => void;
}

/** How many characters of an item's state a wrong answer shows. */
export const WRONG_STATE_CHARS = 200;

/**
 * Runs the evaluation. Requests go one at a time (the engine serves one at a time anyway); every
 * request carries `include: ["answer_mass"]`. The data are checked before the first request (a
 * label of a question its request does not ask, a label that is not an answer, one key asking two
 * different questions): a DatasetError naming the line and the field. A request that fails is
 * recorded in its mode's `errors` and the run goes on. `signal` stops it between requests (and
 * cancels the one in flight): the promise rejects with the AbortError.
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationReport> {
  const { items, signal } = options;
  const modes = options.modes ?? [{ calibrate: false }, { calibrate: true }];
  const questions = checkItems(items);
  const fitBase = options.fit ? fitBaseMode(modes) : null;
  const split = options.fit ? splitItems(items.length, splitOptions(options.fit)) : null;
  const modeCount = modes.length + (split ? 1 : 0);
  const total = modes.length * items.length + (split ? split.holdout.length : 0);
  let done = 0;
  options.onProgress?.({ done, total, mode: 0, modes: modeCount });
  let model: string | null = null;
  let device: string | null = null;

  const pass = async (modeIndex: number, mode: EvaluationModeOptions, indices: number[], heldOut: boolean) => {
    const profile = mode.profile ?? null;
    const alpha = profile ? (mode.alpha ?? null) : null;
    const observations: Observation[] = [];
    const errors: ItemError[] = [];
    const latencies: number[] = [];
    for (const index of indices) {
      signal?.throwIfAborted();
      const item = items[index]!;
      const request = modeRequest(item, mode.calibrate, profile, alpha);
      const start = performance.now();
      let response: DecisionResponse | null = null;
      try {
        response = await options.decide(request, signal ? { signal } : {});
      } catch (error) {
        signal?.throwIfAborted();
        errors.push({ item: index, line: item.line, message: error instanceof Error ? error.message : String(error) });
      }
      const latency = performance.now() - start;
      if (response) {
        try {
          observations.push(...observe(item, index, response, latency));
          latencies.push(latency);
          model ??= response.model;
          device ??= response.provider;
        } catch (error) {
          if (error instanceof DatasetError) throw error;
          errors.push({ item: index, line: item.line, message: (error as Error).message });
        }
      }
      done += 1;
      options.onProgress?.({ done, total, mode: modeIndex, modes: modeCount });
    }
    options.onObservations?.(modeIndex, observations);
    return { observations, result: modeResult(items, mode.calibrate, profile, alpha, heldOut, observations, errors, latencies) };
  };

  const results: EvaluationMode[] = [];
  let baseObservations: Observation[] | null = null;
  const all = items.map((_, i) => i);
  for (const [i, mode] of modes.entries()) {
    const { observations, result } = await pass(i, mode, all, false);
    results.push(result);
    if (mode === fitBase) baseObservations = observations;
  }

  let fit: EvaluationReport['fit'] = null;
  // With no answer to fit on (every request of the base mode failed, as its errors say), no fit.
  if (options.fit && fitBase && split && baseObservations && baseObservations.length > 0) {
    signal?.throwIfAborted();
    const fitted = fitProfile({
      id: options.fit.id,
      model: model ?? 'unknown',
      calibrate: fitBase.calibrate,
      questions,
      observations: baseObservations,
      ...splitOptions(options.fit),
      itemCount: items.length,
    });
    fit = { profile: fitted.profile, holdout_items: fitted.holdoutItems, fit_items: fitted.fitItems, notes: fitted.notes };
    const rerun = { calibrate: fitBase.calibrate, profile: fitted.profile, alpha: options.fit.alpha ?? null };
    results.push((await pass(modes.length, rerun, fitted.holdoutItems, true)).result);
  }

  return {
    object: 'evaluation_report',
    created: new Date().toISOString(),
    model: model ?? 'unknown',
    device: device ?? 'unknown',
    data: { name: options.dataName, items: items.length },
    modes: results,
    fit,
  };
}

function splitOptions(fit: NonNullable<EvaluationOptions['fit']>): { holdout?: number; seed?: number } {
  return { ...(fit.holdout === undefined ? {} : { holdout: fit.holdout }), ...(fit.seed === undefined ? {} : { seed: fit.seed }) };
}

/** The mode a profile is fitted on: the first without a profile, calibrate off by preference. */
function fitBaseMode(modes: EvaluationModeOptions[]): EvaluationModeOptions {
  const plain = modes.filter((m) => !m.profile);
  const base = plain.find((m) => !m.calibrate) ?? plain[0];
  if (!base) throw new Error('fitting a profile needs a mode without a profile, to fit on');
  return base;
}

/**
 * Checks the labels before anything runs, and returns key → question (normalized) over the set.
 * An item whose request is invalid is left to the engine (its error is recorded, the run goes on).
 */
function checkItems(items: EvalItem[]): Record<string, Question> {
  const questions: Record<string, Question> = {};
  const fingerprints = new Map<string, { fingerprint: string; line: number }>();
  for (const item of items) {
    let asked: Record<string, Question>;
    try {
      asked = requestQuestions(item);
    } catch {
      continue;
    }
    for (const key of Object.keys(item.labels)) {
      const field = `labels.${key}`;
      if (!Object.hasOwn(asked, key)) {
        throw new DatasetError(`the request asks no question "${key}" (it asks ${Object.keys(asked).map((k) => `"${k}"`).join(', ')})`, item.line, field);
      }
      const question = asked[key]!;
      expectedLabel(question, item.labels[key], item.line, field);
      const fingerprint = questionFingerprint(question);
      const seen = fingerprints.get(key);
      if (seen === undefined) {
        fingerprints.set(key, { fingerprint, line: item.line });
        questions[key] = question;
      } else if (seen.fingerprint !== fingerprint) {
        throw new DatasetError(
          `question "${key}" differs from the one of line ${seen.line}: a key is scored over the set, so it must ask the same question on every line`,
          item.line,
          `request.questions.${key}`,
        );
      }
    }
  }
  return questions;
}

/**
 * The item's request as a mode sends it: the mode's calibrate and profile (or none; the item's own
 * are replaced), answer_mass asked. With a profile, only the labelled questions are sent: a
 * profile holds only the questions it was fitted on, and the engine refuses a request with a
 * question its profile lacks (a question's answer does not depend on the others in the request).
 */
function modeRequest(item: EvalItem, calibrate: boolean, profile: CalibrationProfile | null, alpha: number | null): DecisionRequestInput {
  const { calibration: _calibration, prediction_set: _set, ...rest } = item.request;
  const include = [...new Set([...(item.request.include ?? []), 'answer_mass' as const])];
  const questions = item.request.questions;
  const labelled =
    profile && questions && typeof questions === 'object' && !Array.isArray(questions)
      ? Object.fromEntries(Object.entries(questions).filter(([key]) => Object.hasOwn(item.labels, key)))
      : questions;
  return {
    ...rest,
    questions: labelled,
    calibrate,
    include,
    ...(profile ? { calibration: profile } : {}),
    ...(profile && alpha !== null ? { prediction_set: { alpha } } : {}),
  };
}

function modeResult(
  items: EvalItem[],
  calibrate: boolean,
  profile: CalibrationProfile | null,
  alpha: number | null,
  heldOut: boolean,
  observations: Observation[],
  errors: ItemError[],
  latencies: number[],
): EvaluationMode {
  const questions = [...byKey(observations).values()].map((group) => {
    if (alpha === null || !group.every((o) => o.predictionSet)) return questionMetrics(group, null);
    // The held-out rerun's sets use a threshold computed on these very items: measure coverage
    // out of sample instead, by 2-fold cross-conformal on them.
    if (heldOut) return questionMetrics(group, { alpha, sets: crossFoldSets(group, alpha), crossFold: true });
    return questionMetrics(group, { alpha, sets: group.map((o) => o.predictionSet!) });
  });
  const wrong: WrongAnswer[] = observations.flatMap((o) => {
    const got = argmax(o.probabilities);
    if (got === o.expected) return [];
    const item = items[o.item]!;
    return [
      {
        item: o.item,
        line: item.line,
        id: item.id,
        key: o.key,
        expected: o.answers[o.expected]!,
        got: o.answers[got]!,
        p_expected: o.probabilities[o.expected]!,
        state: stateText(item.request.state),
      },
    ];
  });
  return { calibrate, profile: profile?.id ?? null, held_out: heldOut, alpha, questions, wrong, latency_ms: latencySummary(latencies), errors };
}

/**
 * Split-conformal sets for items whose probabilities are already calibrated, 2-fold: the items
 * (in order) are split into even and odd positions; each half's sets use the threshold of the
 * other half's nonconformity scores. Every set is out of sample, so the coverage is an honest
 * estimate (for a calibration set half the size of the profile's).
 */
export function crossFoldSets(observations: readonly Observation[], alpha: number): number[][] {
  const half = (parity: number) => observations.filter((_, i) => i % 2 === parity);
  const threshold = (parity: number) =>
    conformalThreshold(
      half(parity)
        .map((o) => nonconformity(o.probabilities, o.expected))
        .sort((a, b) => a - b),
      alpha,
    );
  const thresholds = [threshold(1), threshold(0)]; // position i uses the other parity's threshold
  return observations.map((o, i) => predictionSet(o.probabilities, thresholds[i % 2]!));
}

/** The first 200 characters of a state: the string itself, else its JSON. */
function stateText(state: unknown): string {
  const text = typeof state === 'string' ? state : (JSON.stringify(state) ?? '');
  return text.slice(0, WRONG_STATE_CHARS);
}

/** Median (the mean of the middle two for an even count), p90 by nearest rank (the ⌈0.9·n⌉-th smallest), mean; 0s when empty. */
export function latencySummary(latencies: readonly number[]): { median: number; p90: number; mean: number } {
  const n = latencies.length;
  if (n === 0) return { median: 0, p90: 0, mean: 0 };
  const sorted = [...latencies].sort((a, b) => a - b);
  const median = n % 2 === 1 ? sorted[(n - 1) / 2]! : (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2;
  return { median, p90: sorted[Math.ceil(0.9 * n) - 1]!, mean: sorted.reduce((a, b) => a + b, 0) / n };
}
