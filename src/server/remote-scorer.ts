import type { PromptLogProbItem, ServingBackend } from './backend.ts';
import { planState } from '../engine/decision/state-plan.ts';
import { questionScore } from '../engine/decision/question-score.ts';
import type { StateScorer } from '../engine/decision/state-scorer.ts';
import type { TokenizerModel } from '../engine/model/tokenizer-model.ts';

/**
 * Decisions scored by a serving engine: the questions are planned by the browser's own code
 * (state-plan.ts: the same prompt ids, the same label continuations), every continuation of every
 * question goes to the engine in ONE request as `prompt ids ++ continuation`, and the labels'
 * probabilities come from the engine's log-probabilities of the continuation tokens through the
 * same arithmetic (question-score.ts, label-scoring.ts). No top-k truncation: each label token's
 * own log-probability is read.
 */
export function remoteScorer(model: TokenizerModel, backend: ServingBackend, version: string): StateScorer {
  return {
    model,
    version,
    provider: backend.kind,
    async scoreState(state, questions, signal, param) {
      const { prefixIds, plans } = planState(model, state, questions, param);
      const items: PromptLogProbItem[] = [];
      const spans = plans.map((plan) => {
        // Each item is `prefixIds ++ promptIds ++ continuation`, its segments shared with the other items, not copied (backend.ts).
        const from = prefixIds.length + plan.promptIds.length;
        const start = items.length;
        for (const continuation of plan.scoring.continuations) items.push({ segments: [prefixIds, plan.promptIds, continuation], from });
        return { start, end: items.length };
      });
      signal?.throwIfAborted();
      const logProbs = await backend.promptLogProbs(items, signal);
      return {
        stateTokens: prefixIds.length,
        questions: plans.map((plan, i) => ({ plan, score: questionScore(plan, logProbs.slice(spans[i]!.start, spans[i]!.end)) })),
      };
    },
  };
}
