/**
 * The evaluation's data model (docs/evaluation.md). Pure: no DOM, no Node, no engine. The CLI
 * (`npm run eval`, scripts/eval) and the playground (src/ui) both run src/evaluation on answers the
 * facade returns, so nothing is computed twice in two ways.
 */
import type { CalibrationProfile, DecisionRequestInput, QuestionType } from '../contract/index.ts';

/** An expected answer as a data set writes it: noul true/false, a choice option key, a score grade index. */
export type Expected = boolean | string | number;

/** One labelled item: a decision request plus the expected answer of some of its questions. */
export interface EvalItem {
  /** 1-based line (JSONL) or row (CSV, header excluded) in the source file, for messages. */
  line: number;
  /** Optional caller id (`id` field / column), shown in the items a run got wrong. */
  id: string | null;
  request: DecisionRequestInput;
  /** Question key → expected answer. Questions without a label are answered but not scored. */
  labels: Record<string, Expected>;
}

/** One scored question of one item: the engine's probabilities and the expected answer. */
export interface Observation {
  /** Index of the item in the data set. */
  item: number;
  key: string;
  type: QuestionType;
  /** The answers in the engine's order: noul `true`,`false`; choice option keys; score grade indices. */
  answers: string[];
  /** Probabilities aligned with `answers`, summing to 1. */
  probabilities: number[];
  /** Index of the expected answer in `answers`. */
  expected: number;
  /** Share of the next-token mass on the allowed answers (answer_mass), or null when not reported. */
  answerMass: number | null;
  /** Wall time of the item's request, in ms. */
  latencyMs: number;
  /** The answer's prediction set as indices into `answers`, when the request asked for one. */
  predictionSet?: number[] | null;
}

/** One bin of a reliability diagram (top-label: the most probable answer's probability). */
export interface ReliabilityBin {
  /** [lower, upper) except the last bin, which includes 1. */
  lower: number;
  upper: number;
  count: number;
  /** Mean top probability of the bin's items (NaN-free: 0 when empty). */
  confidence: number;
  /** Share of the bin's items whose top answer was the expected one (0 when empty). */
  accuracy: number;
}

export interface QuestionMetrics {
  key: string;
  type: QuestionType;
  items: number;
  answers: string[];
  /** Share of items whose most probable answer is the expected one (every type). */
  accuracy: number;
  /** Unweighted mean over answers of the per-answer F1 (noul and choice; null for score). */
  macro_f1: number | null;
  /** score only: mean |expected score − answer score| (the score is Σ index · p), else null. */
  mae: number | null;
  /** score only: Spearman's ρ between expected grades and answer scores (ties averaged), else null. */
  spearman: number | null;
  /** Mean over items of Σₖ (pₖ − yₖ)² over all answers (multi-class Brier score, 0..2). */
  brier: number;
  /** Mean over items of −ln max(p(expected), 1e-12). */
  log_loss: number;
  /** Expected calibration error, top-label, 10 equal-width bins: Σ_b (n_b / n) |acc_b − conf_b|. */
  ece: number;
  reliability: ReliabilityBin[];
  /** confusion[i][j]: items expected answers[i] whose most probable answer was answers[j]. */
  confusion: number[][];
  /** Mean answer_mass over the items that report it, or null. */
  mean_answer_mass: number | null;
  /**
   * Prediction sets, when a profile with conformal scores was applied: empirical coverage and mean
   * size. `cross_fold`: the sets were re-derived by 2-fold cross-conformal on these items (each
   * half's threshold from the other half's scores), because the profile's own threshold was
   * computed on these very items and its coverage here would be in-sample.
   */
  prediction_sets: { alpha: number; coverage: number; mean_size: number; cross_fold: boolean } | null;
}

/** An item a question got wrong: shown so a person can look at it. */
export interface WrongAnswer {
  item: number;
  line: number;
  id: string | null;
  key: string;
  expected: string;
  got: string;
  /** Probability the engine gave the expected answer. */
  p_expected: number;
  /** The first 200 characters of the state. */
  state: string;
}

/** The metrics of one pass over the set, with one setting (calibrate on or off, a profile or none). */
export interface EvaluationMode {
  /** `calibrate` sent with every request (contextual calibration). */
  calibrate: boolean;
  /** The id of the calibration profile applied, or null. */
  profile: string | null;
  /** True for the pass that sent only the held-out items again with the profile just fitted. */
  held_out: boolean;
  /** The prediction sets' alpha sent with every request, or null. */
  alpha: number | null;
  questions: QuestionMetrics[];
  wrong: WrongAnswer[];
  /** Over the requests that succeeded; 0 when none did. Median; p90 by nearest rank. */
  latency_ms: { median: number; p90: number; mean: number };
  /** Items whose request failed: recorded, and the run went on. */
  errors: ItemError[];
}

/** An item whose request failed during a run. */
export interface ItemError {
  item: number;
  line: number;
  message: string;
}

export interface EvaluationReport {
  object: 'evaluation_report';
  created: string;
  /** The model version that answered (`DecisionResponse.model`). */
  model: string;
  device: string;
  data: { name: string; items: number };
  modes: EvaluationMode[];
  /** When a profile was fitted: before and after on the held-out items, per question. */
  fit: {
    profile: CalibrationProfile;
    holdout_items: number[];
    fit_items: number[];
    /** What a person should know about the fit (a question left at the identity, a temperature at its bound, …). */
    notes: string[];
  } | null;
}

/** Progress of a run: done of total requests. */
export type EvaluationProgress = { done: number; total: number; mode: number; modes: number };
