import { labelLogProbs } from './label-scoring.ts';
import type { QuestionPlan } from './question-plan.ts';

/** What scoring one question against a state yields, before calibration. */
export interface QuestionScore {
  /** Probability of each answer (plan.answers order), renormalised over the valid answers. */
  probabilities: number[];
  /** Share of the model's next-token mass that fell on valid answers. */
  coverage: number;
  /** Answer tokens read: the root position plus every label token of the plan's rows. */
  answerTokens: number;
}

/**
 * One question's answer probabilities from the log-probabilities of its plan's continuations
 * (`plan.scoring.continuations`, label-scoring.ts), however they were computed: each answer's
 * mass is the sum of its labels' probabilities, renormalised over the answers.
 */
export function questionScore(plan: QuestionPlan, continuationLogProbs: readonly (readonly number[])[]): QuestionScore {
  const logps = labelLogProbs(plan.scoring, continuationLogProbs);
  const mass = plan.answers.map(() => 0);
  plan.labels.forEach((label, i) => {
    mass[plan.answers.indexOf(label.answer)]! += Math.exp(logps[i]!);
  });
  const coverage = mass.reduce((a, b) => a + b, 0);
  const probabilities = coverage > 0 ? mass.map((m) => m / coverage) : mass.map(() => 1 / mass.length);
  return { probabilities, coverage: Math.min(1, coverage), answerTokens: answerTokens(plan) };
}

/** The answer tokens a question reads (usage.output_tokens): its root position and the label tokens of its rows. */
export function answerTokens(plan: QuestionPlan): number {
  return 1 + plan.scoring.rows.reduce((n, row) => n + row.length, 0);
}
