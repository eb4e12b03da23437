import { JevError, type Question } from '../../contract/index.ts';
import { promptFrame } from './decision-prompt.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';
import { planQuestion, questionSpan, rebasePlan, type QuestionPlan } from './question-plan.ts';
import { stateMemo } from './state-memo.ts';

/** A decision's token-level plan: the state tokens every question shares, and each question's plan after them. */
export interface StatePlan {
  /** The state's tokens that every question continues unchanged (the prefix computed once). */
  prefixIds: readonly number[];
  /** One plan per question, rebased on `prefixIds`: question i's prompt is `prefixIds ++ plans[i].promptIds`. */
  plans: QuestionPlan[];
}

/**
 * Plans every question of a decision against one state: the prompt frame, the state's tokens
 * once, each question's tokens and label paths (question-plan.ts). The shared prefix is the part
 * of the state's tokens every question continues unchanged (all of them, unless a question's first
 * token merges into the state's last). Refuses (422 `context_length_exceeded`, `param`) a state and
 * question that do not fit the model's context. The same plan serves the browser's forward passes
 * (local-scorer.ts) and a serving engine's log-probabilities (src/server/).
 */
export function planState(lm: Pick<TokenizerModel, 'tokenizer' | 'encode' | 'contextLength'>, state: string, questions: readonly Question[], param: string): StatePlan {
  const frame = promptFrame(lm, state);
  // The state's ids: tokenized once, and not again while it stays among the recent states (state-memo.ts).
  const memo = stateMemo(lm, frame.prefix, frame.addSpecialTokens);
  const ownIds = memo.ids;
  const planned = questions.map((q) => planQuestion(lm, frame, q, memo));
  const shared = Math.min(...planned.map((p) => p.stateIds.length));
  if (shared === 0) throw new Error('decide: no state token is shared by the questions');
  // The memo's own array where every question continues the whole state (read, never changed): the same array for the same state.
  const prefixIds = shared === ownIds.length ? ownIds : ownIds.slice(0, shared);
  const plans = planned.map((p) => rebasePlan(p, shared));
  const longest = Math.max(...plans.map(questionSpan));
  if (prefixIds.length + longest > lm.contextLength) {
    throw new JevError(
      'context_length_exceeded',
      `The state takes ${prefixIds.length} tokens and the longest question ${longest} more, ${prefixIds.length + longest} in all; the model's context holds ${lm.contextLength}.`,
      { param, details: { state_tokens: prefixIds.length, question_tokens: longest, context_length: lm.contextLength } },
    );
  }
  return { prefixIds, plans };
}
