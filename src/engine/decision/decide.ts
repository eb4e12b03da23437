import { customAlphabet } from 'nanoid';
import {
  type Answer,
  type DecisionRequest,
  type DecisionResponse,
  type Question,
} from '../../contract/index.ts';
import { calibrateAnswer, planCalibration } from './apply-calibration.ts';
import { choiceConfidence, scoreConfidence } from './confidence.ts';
import { CONTENT_FREE_STATE } from './decision-prompt.ts';
import { PriorCache } from './prior-cache.ts';
import { promptOf } from './decision-prompt-view.ts';
import type { StateScorer } from './state-scorer.ts';

const requestId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 24);

export interface DecideOptions {
  signal?: AbortSignal | undefined;
  priors: PriorCache;
}

/**
 * Answers every question of a decision request from one encoding of its state: the scorer
 * (local-scorer.ts in the browser, a serving engine's behind src/server/) yields each question's
 * answer probabilities; calibration, confidence and the response are the same for both.
 */
export async function decide(scorer: StateScorer, request: DecisionRequest, options: DecideOptions): Promise<DecisionResponse> {
  const keys = Object.keys(request.questions);
  // The request's profiles are checked before any forward pass (apply-calibration.ts).
  const profiles = planCalibration(request, scorer.version);
  const withMass = request.include.includes('answer_mass');
  const withPrompt = request.include.includes('prompt');
  const withUsageDetails = request.include.includes('usage_details');
  const scored = await scorer.scoreState(request.state, keys.map((k) => request.questions[k]!), options.signal, 'state');
  const priors = request.calibrate ? await labelPriors(scorer, keys.map((k) => request.questions[k]!), options) : null;

  const answers: Record<string, Answer> = Object.create(null);
  keys.forEach((key, qi) => {
    const { plan, score } = scored.questions[qi]!;
    const probabilities = priors ? calibrate(score.probabilities, priors[qi]!) : score.probabilities;
    const fitted = profiles ? calibrateAnswer(profiles[key]!, plan.answers, probabilities) : null;
    const answer = toAnswer(request.questions[key]!, plan.answers, fitted?.probabilities ?? probabilities, score.coverage);
    // Extension fields, only when asked: the response is otherwise exactly the specification's.
    if (withMass) answer.answer_mass = score.coverage;
    if (withPrompt) answer.prompt = promptOf(scorer.model, plan);
    if (fitted?.set) answer.prediction_set = fitted.set;
    answers[key] = answer;
  });
  return {
    id: `dec_${requestId()}`,
    model: scorer.version,
    provider: scorer.provider,
    answers: { ...answers },
    usage: {
      input_tokens: scored.stateTokens + scored.questions.reduce((n, q) => n + q.plan.promptIds.length, 0),
      output_tokens: scored.questions.reduce((n, q) => n + q.score.answerTokens, 0),
      cost: 0,
      ...(withUsageDetails ? { input_tokens_details: { cached_tokens: scored.cachedTokens ?? 0, cache_write_tokens: scored.cacheWriteTokens ?? 0 } } : {}),
    },
  };
}

/** Label priors on the content-free state, from the cache where measured before. */
async function labelPriors(scorer: StateScorer, questions: readonly Question[], options: DecideOptions): Promise<number[][]> {
  const modelKey = scorer.version;
  const keys = questions.map((q) => PriorCache.key(modelKey, q));
  const missing = questions.filter((_, i) => !options.priors.get(keys[i]!));
  if (missing.length > 0) {
    const measured = await scorer.scoreState(CONTENT_FREE_STATE, missing, options.signal, 'state');
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
