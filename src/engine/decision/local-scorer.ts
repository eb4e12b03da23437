import type { Question } from '../../contract/index.ts';
import { LanguageModel } from '../model/language-model.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { modelVersion } from '../model/model-version.ts';
import { continueFrom, keepCache, startFrom, type PrefixCache } from '../model/prefix-cache.ts';
import type { QuestionPlan } from './question-plan.ts';
import { questionScore, type QuestionScore } from './question-score.ts';
import { planState } from './state-plan.ts';
import type { ScoredState, StateScorer } from './state-scorer.ts';

/** Decisions scored by the engine's own forward passes over `lm`, reusing `prefixes` (null: every request starts cold). */
export function localScorer(lm: LanguageModel, prefixes: PrefixCache | null): StateScorer {
  return {
    model: lm,
    version: modelVersion(lm),
    provider: lm.device,
    scoreState: (state, questions, signal, param) => scoreState(lm, state, questions, signal, param, prefixes),
  };
}

/**
 * Encodes `state` once and scores each question against that cached prefix. Each question's
 * forward passes read the state cache and leave it intact, so a question's answer does not
 * depend on which other questions share the request. A single question is fed with the state in
 * one pass (the same numbers, one pass fewer). The longest prefix that an earlier request left
 * in `prefixes` is not fed again, and this request's prompt is left there for the next.
 */
export async function scoreState(
  lm: LanguageModel,
  state: string,
  questions: readonly Question[],
  signal: AbortSignal | undefined,
  param: string,
  prefixes: PrefixCache | null,
): Promise<ScoredState> {
  const { prefixIds, plans } = planState(lm, state, questions, param);

  signal?.throwIfAborted();
  if (plans.length === 1) {
    // One question: nothing else reads the state's cache, so the state and the question go in
    // one pass, as the naive way prefills them; a separate state pass would only add a pass.
    const plan = plans[0]!;
    const ids = [...prefixIds, ...plan.promptIds];
    const start = startFrom(prefixes, lm, ids, ids.length - 1);
    const whole = await continueFrom(prefixes, lm, start, ids.slice(0, start.reused), ids.slice(start.reused));
    const rootLogProbs = LanguageModel.logProbsAt(whole.logits, -1);
    whole.logits.dispose();
    let score: QuestionScore;
    try {
      score = await scoreQuestion(lm, whole.cache, rootLogProbs, { ...plan, promptIds: [] }, signal);
    } catch (e) {
      keepCache(prefixes, ids, whole.cache);
      throw e;
    }
    const written = keepCache(prefixes, ids, whole.cache) ? ids.length - start.reused : 0;
    return { stateTokens: prefixIds.length, cachedTokens: start.reused, cacheWriteTokens: written, questions: [{ plan, score }] };
  }
  // The state's own next-token distribution is read only by a question whose labels follow the
  // state directly (no prompt tokens of its own): then a state held whole must still feed a token.
  const rootNeeded = plans.some((p) => p.promptIds.length === 0);
  const start = startFrom(prefixes, lm, prefixIds, rootNeeded ? prefixIds.length - 1 : prefixIds.length);
  let prefixCache = start.cache;
  let prefixLogProbs: Float64Array | null = null;
  if (start.reused < prefixIds.length) {
    const pass = await continueFrom(prefixes, lm, start, prefixIds.slice(0, start.reused), prefixIds.slice(start.reused));
    prefixCache = pass.cache;
    if (rootNeeded) prefixLogProbs = LanguageModel.logProbsAt(pass.logits, -1);
    pass.logits.dispose();
  }
  const out: { plan: QuestionPlan; score: QuestionScore }[] = [];
  try {
    for (const plan of plans) {
      signal?.throwIfAborted();
      out.push({ plan, score: await scoreQuestion(lm, prefixCache, prefixLogProbs, plan, signal) });
    }
  } catch (e) {
    keepCache(prefixes, prefixIds, prefixCache);
    throw e;
  }
  const written = keepCache(prefixes, prefixIds, prefixCache) ? prefixIds.length - start.reused : 0;
  return { stateTokens: prefixIds.length, cachedTokens: start.reused, cacheWriteTokens: written, questions: out };
}

/** One question's passes: its prompt after the state's cache (the root distribution), then one pass per label row. */
async function scoreQuestion(
  lm: LanguageModel,
  stateCache: KvCache,
  stateLogProbs: Float64Array | null,
  plan: QuestionPlan,
  signal: AbortSignal | undefined,
): Promise<QuestionScore> {
  let rootLogProbs = stateLogProbs;
  let promptCache = stateCache;
  const needCache = plan.scoring.rows.length > 0;
  if (plan.promptIds.length > 0) {
    const pass = await lm.forward(plan.promptIds, stateCache, 1);
    rootLogProbs = LanguageModel.logProbsAt(pass.logits, -1);
    pass.logits.dispose();
    if (needCache) promptCache = pass.cache;
    else pass.cache.dispose();
  }
  try {
    const rowLogProbs: Float64Array[][] = [];
    for (const row of plan.scoring.rows) {
      signal?.throwIfAborted();
      const pass = await lm.forward(row, promptCache, 0);
      pass.cache.dispose();
      rowLogProbs.push(row.map((_, j) => LanguageModel.logProbsAt(pass.logits, j)));
      pass.logits.dispose();
    }
    if (!rootLogProbs) throw new Error('decide: no next-token distribution at the question\'s root');
    return questionScore(plan, plan.scoring.fromDistributions(rootLogProbs, rowLogProbs));
  } finally {
    if (promptCache !== stateCache) promptCache.dispose();
  }
}
