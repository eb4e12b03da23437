/**
 * Turns one labelled item and the engine's response to it into observations: per labelled
 * question, the answers in the engine's order, their probabilities and the index of the expected
 * answer. The label is read as the data set parsers read it (dataset-label.ts), so a label means
 * the same thing in a file, in the playground and here.
 */
import { parseDecisionRequest, type Answer, type DecisionResponse, type Question } from '../contract/index.ts';
import { DatasetError } from './dataset-error.ts';
import { expectedLabel } from './dataset-label.ts';
import type { EvalItem, Observation } from './types.ts';

/**
 * One observation per labelled question of the item, in the order of its labels. Throws
 * DatasetError (the item's line, field `labels.<key>`) for a label of a question the request does
 * not ask, or a label that is not one of its question's answers; an Error for a response that
 * lacks the question or answers it with another type (an engine fault, not the data's).
 */
export function observe(item: EvalItem, itemIndex: number, response: DecisionResponse, latencyMs: number): Observation[] {
  const questions = requestQuestions(item);
  return Object.keys(item.labels).map((key) => {
    const field = `labels.${key}`;
    const question = Object.hasOwn(questions, key) ? questions[key]! : null;
    if (question === null) {
      throw new DatasetError(`the request asks no question "${key}" (it asks ${Object.keys(questions).map((k) => `"${k}"`).join(', ')})`, item.line, field);
    }
    const expected = expectedLabel(question, item.labels[key], item.line, field);
    const answer = Object.hasOwn(response.answers, key) ? response.answers[key]! : null;
    if (answer === null || answer.type !== question.type) {
      throw new Error(`the response to line ${item.line} has no ${question.type} answer for question "${key}"`);
    }
    const { answers, probabilities } = answerDistribution(answer);
    const index = answers.indexOf(String(expected));
    if (index < 0) throw new DatasetError(`${JSON.stringify(expected)} is not among the answers ${answers.join(', ')}`, item.line, field);
    return {
      item: itemIndex,
      key,
      type: answer.type,
      answers,
      probabilities,
      expected: index,
      answerMass: answer.answer_mass ?? null,
      latencyMs,
      predictionSet: answer.prediction_set ? answer.prediction_set.map((a) => answers.indexOf(a)).filter((i) => i >= 0) : null,
    };
  });
}

/** The item's questions, normalized as the engine reads them (the fingerprint and the labels need that form). */
export function requestQuestions(item: EvalItem): Record<string, Question> {
  try {
    return parseDecisionRequest(item.request).questions;
  } catch (error) {
    throw new DatasetError(`the request is not a valid decision request: ${(error as Error).message}`, item.line, 'request');
  }
}

/**
 * The answers in the engine's order and their probabilities, renormalised to sum to 1 (the
 * response's sum is within rounding of 1): noul `true`, `false` with [noul, 1 − noul]; choice the
 * keys of `probabilities` in its order; score the grade indices "0".."K−1" ascending.
 */
export function answerDistribution(answer: Answer): { answers: string[]; probabilities: number[] } {
  switch (answer.type) {
    case 'noul':
      return { answers: ['true', 'false'], probabilities: [answer.noul, 1 - answer.noul] };
    case 'choice': {
      const answers = Object.keys(answer.probabilities);
      return { answers, probabilities: normalised(answers.map((a) => answer.probabilities[a]!)) };
    }
    case 'score': {
      const answers = Object.keys(answer.legend)
        .map(Number)
        .sort((a, b) => a - b)
        .map(String);
      return { answers, probabilities: normalised(answers.map((a) => answer.probabilities[a] ?? 0)) };
    }
    default: {
      const never: never = answer;
      throw new Error(`unknown answer type ${(never as { type: string }).type}`);
    }
  }
}

function normalised(values: number[]): number[] {
  const total = values.reduce((a, b) => a + b, 0);
  return total > 0 ? values.map((v) => v / total) : values;
}
