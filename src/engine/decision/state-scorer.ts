import type { Question } from '../../contract/index.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import type { QuestionPlan } from './question-plan.ts';
import type { QuestionScore } from './question-score.ts';

/** Every question of a decision scored against one state. */
export interface ScoredState {
  /** The state tokens shared by the questions (counted once in usage.input_tokens). */
  stateTokens: number;
  /** Input tokens read from the prefix cache instead of fed (0 where a scorer has no cache). */
  cachedTokens?: number;
  /** Tokens this request added to the prefix cache (a new entry's tokens past those it reused). */
  cacheWriteTokens?: number;
  questions: { plan: QuestionPlan; score: QuestionScore }[];
}

/**
 * Whoever computes a decision's log-probabilities, behind `decide`: the browser's engine over its
 * own forward passes (local-scorer.ts), or a server over a serving engine (src/server/). Both plan
 * the questions with state-plan.ts and score them with question-score.ts; only where the
 * log-probabilities come from differs.
 */
export interface StateScorer {
  /** The model's tokenizer (`include: ["prompt"]` decodes the prompt's ids with it). */
  readonly model: Pick<TokenizerModel, 'tokenizer'>;
  /** The model version responses report, and calibration profiles and label priors are keyed by. */
  readonly version: string;
  /** The response's `provider`. */
  readonly provider: string;
  scoreState(state: string, questions: readonly Question[], signal: AbortSignal | undefined, param: string): Promise<ScoredState>;
}
