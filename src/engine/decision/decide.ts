import { customAlphabet } from 'nanoid';
import {
  JevError,
  type Answer,
  type DecisionRequest,
  type DecisionResponse,
  type Question,
} from '../../contract/index.ts';
import { calibrateAnswer, planCalibration } from './apply-calibration.ts';
import { choiceConfidence, scoreConfidence } from './confidence.ts';
import { CONTENT_FREE_STATE, promptFrame } from './decision-prompt.ts';
import { LanguageModel } from '../model/language-model.ts';
import { PriorCache } from './prior-cache.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { continueFrom, keepCache, startFrom, type PrefixCache } from '../model/prefix-cache.ts';
import { planQuestion, questionSpan, rebasePlan, type QuestionPlan } from './question-plan.ts';
import { promptOf } from './decision-prompt-view.ts';
import { modelVersion } from '../model/model-version.ts';

const requestId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 24);

/** What scoring one question against a state yields, before calibration. */
export interface QuestionScore {
  /** Probability of each answer (plan.answers order), renormalised over the valid answers. */
  probabilities: number[];
  /** Share of the model's next-token mass that fell on valid answers. */
  coverage: number;
  /** Answer tokens read: the root position plus every label token fed. */
  answerTokens: number;
}

export interface DecideOptions {
  signal?: AbortSignal | undefined;
  priors: PriorCache;
  /** Caches of earlier requests' prompts (null: every request starts cold). */
  prefixes: PrefixCache | null;
}

/** Answers every question of a decision request from one encoding of its state. */
export async function decide(lm: LanguageModel, request: DecisionRequest, options: DecideOptions): Promise<DecisionResponse> {
  const keys = Object.keys(request.questions);
  // The request's profiles are checked before any forward pass (apply-calibration.ts).
  const profiles = planCalibration(request, modelVersion(lm));
  const withMass = request.include.includes('answer_mass');
  const withPrompt = request.include.includes('prompt');
  const scored = await scoreState(lm, request.state, keys.map((k) => request.questions[k]!), options.signal, 'state', options.prefixes);
  const priors = request.calibrate ? await labelPriors(lm, keys.map((k) => request.questions[k]!), options) : null;

  const answers: Record<string, Answer> = Object.create(null);
  keys.forEach((key, qi) => {
    const { plan, score } = scored.questions[qi]!;
    const probabilities = priors ? calibrate(score.probabilities, priors[qi]!) : score.probabilities;
    const fitted = profiles ? calibrateAnswer(profiles[key]!, plan.answers, probabilities) : null;
    const answer = toAnswer(request.questions[key]!, plan.answers, fitted?.probabilities ?? probabilities, score.coverage);
    // Extension fields, only when asked: the response is otherwise exactly the specification's.
    if (withMass) answer.answer_mass = score.coverage;
    if (withPrompt) answer.prompt = promptOf(lm, plan);
    if (fitted?.set) answer.prediction_set = fitted.set;
    answers[key] = answer;
  });
  return {
    id: `dec_${requestId()}`,
    model: modelVersion(lm),
    provider: lm.device,
    answers: { ...answers },
    usage: {
      input_tokens: scored.stateTokens + scored.questions.reduce((n, q) => n + q.plan.promptIds.length, 0),
      output_tokens: scored.questions.reduce((n, q) => n + q.score.answerTokens, 0),
      cost: 0,
    },
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
): Promise<{ stateTokens: number; questions: { plan: QuestionPlan; score: QuestionScore }[] }> {
  const frame = promptFrame(lm, state);
  const ownIds = lm.encode(frame.prefix, frame.addSpecialTokens);
  const planned = questions.map((q) => planQuestion(lm, frame, q, ownIds));
  // The cached state is the part of the state's tokens every question continues unchanged (all
  // of them, unless a question's first token merges into the state's last: question-plan.ts).
  const shared = Math.min(...planned.map((p) => p.stateIds.length));
  if (shared === 0) throw new Error('decide: no state token is shared by the questions');
  const prefixIds = ownIds.slice(0, shared);
  const plans = planned.map((p) => rebasePlan(p, shared));
  const longest = Math.max(...plans.map(questionSpan));
  if (prefixIds.length + longest > lm.contextLength) {
    throw new JevError(
      'context_length_exceeded',
      `The state takes ${prefixIds.length} tokens and the longest question ${longest} more, ${prefixIds.length + longest} in all; the model's context holds ${lm.contextLength}.`,
      { param, details: { state_tokens: prefixIds.length, question_tokens: longest, context_length: lm.contextLength } },
    );
  }

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
    try {
      const score = await scoreQuestion(lm, whole.cache, rootLogProbs, { ...plan, promptIds: [] }, signal);
      return { stateTokens: prefixIds.length, questions: [{ plan, score }] };
    } finally {
      keepCache(prefixes, ids, whole.cache);
    }
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
  try {
    const out: { plan: QuestionPlan; score: QuestionScore }[] = [];
    for (const plan of plans) {
      signal?.throwIfAborted();
      out.push({ plan, score: await scoreQuestion(lm, prefixCache, prefixLogProbs, plan, signal) });
    }
    return { stateTokens: prefixIds.length, questions: out };
  } finally {
    keepCache(prefixes, prefixIds, prefixCache);
  }
}

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
    let fed = 0;
    for (const row of plan.scoring.rows) {
      signal?.throwIfAborted();
      const pass = await lm.forward(row, promptCache, 0);
      pass.cache.dispose();
      rowLogProbs.push(row.map((_, j) => LanguageModel.logProbsAt(pass.logits, j)));
      pass.logits.dispose();
      fed += row.length;
    }
    if (!rootLogProbs) throw new Error('decide: no next-token distribution at the question\'s root');
    const labelLogProbs = plan.scoring.labelLogProbs(rootLogProbs, rowLogProbs);
    const mass = plan.answers.map(() => 0);
    plan.labels.forEach((label, i) => {
      mass[plan.answers.indexOf(label.answer)]! += Math.exp(labelLogProbs[i]!);
    });
    const coverage = mass.reduce((a, b) => a + b, 0);
    const probabilities = coverage > 0 ? mass.map((m) => m / coverage) : mass.map(() => 1 / mass.length);
    return { probabilities, coverage: Math.min(1, coverage), answerTokens: 1 + fed };
  } finally {
    if (promptCache !== stateCache) promptCache.dispose();
  }
}

/** Label priors on the content-free state, from the cache where measured before. */
async function labelPriors(lm: LanguageModel, questions: readonly Question[], options: DecideOptions): Promise<number[][]> {
  const modelKey = modelVersion(lm);
  const keys = questions.map((q) => PriorCache.key(modelKey, q));
  const missing = questions.filter((_, i) => !options.priors.get(keys[i]!));
  if (missing.length > 0) {
    const measured = await scoreState(lm, CONTENT_FREE_STATE, missing, options.signal, 'state', options.prefixes);
    let m = 0;
    questions.forEach((_, i) => {
      if (!options.priors.get(keys[i]!)) options.priors.set(keys[i]!, measured.questions[m++]!.score.probabilities);
    });
  }
  return keys.map((k) => options.priors.get(k)!);
}

/** Divides out the prior and renormalises (contextual calibration). */
export function calibrate(probabilities: readonly number[], prior: readonly number[]): number[] {
  const floor = 1e-12;
  const scaled = probabilities.map((p, i) => p / Math.max(prior[i] ?? 0, floor));
  const total = scaled.reduce((a, b) => a + b, 0);
  return total > 0 && Number.isFinite(total) ? scaled.map((s) => s / total) : [...probabilities];
}

function toAnswer(question: Question, answers: readonly string[], probabilities: readonly number[], coverage: number): Answer {
  const byAnswer = (a: string) => probabilities[answers.indexOf(a)]!;
  switch (question.type) {
    case 'noul':
      return { type: 'noul', noul: byAnswer('true') };
    case 'choice': {
      // Listed in the order the request gave its options; `choice` is the most probable key.
      const keys = Object.keys(question.criteria);
      const probs: Record<string, number> = Object.create(null);
      let best = keys[0]!;
      for (const k of keys) {
        probs[k] = byAnswer(k);
        if (probs[k]! > probs[best]!) best = k;
      }
      return { type: 'choice', choice: best, probabilities: { ...probs }, confidence: choiceConfidence(probabilities, coverage) };
    }
    case 'score': {
      const legend: Record<string, string> = {};
      const probs: Record<string, number> = {};
      let score = 0;
      question.criteria.forEach((label, i) => {
        legend[String(i)] = label;
        probs[String(i)] = byAnswer(String(i));
        score += i * probs[String(i)]!;
      });
      return { type: 'score', score, legend, probabilities: probs, confidence: scoreConfidence(probabilities, coverage) };
    }
    default: {
      const never: never = question;
      throw new Error(`unknown question type ${(never as { type: string }).type}`);
    }
  }
}
