/**
 * OpenAI's Decisions shape around the one decision engine: a request of that shape becomes the Jev
 * request the engine already serves (the same parser, prompt builder and `decide`), and the Jev
 * answers become OpenAI's. Pure: no engine, no I/O. docs/decisions.md, "OpenAI's shape".
 *
 * The Jev request of an OpenAI request (what `toJevRequests` builds):
 * - `state`: `input` rendered (openai-decision-input.ts);
 * - a question's key: its `name`; an unnamed question at index i: `question_<i>` (with `_` added
 *   until no name takes it);
 * - predicate → `noul` with the instructions and no criteria;
 * - choice → `choice` whose option keys are the values' text (`choiceOptionKeys`), each with its
 *   description;
 * - score → `score` whose grade labels are the levels' `label`, or `label: description`;
 * - `include: ["answer_mass", "usage_details"]` (the refusal's input, the cache's usage), and our
 *   extensions `calibrate` and `calibration` as given.
 * A request of more than `limits.maxQuestions` questions becomes several Jev requests of the same
 * state, in order.
 */
import type { DecisionRequestInput } from './decision-request.ts';
import type { Answer, DecisionResponse } from './decision-response.ts';
import { JevError } from './errors.ts';
import { limits } from './limits.ts';
import { formatParam } from './param-path.ts';
import type { OpenAIChoiceValue, OpenAIDecisionQuestion, OpenAIDecisionRequest } from './openai-decision-request.ts';
import type { OpenAIDecision, OpenAIDecisionAnswer } from './openai-decision-response.ts';
import type { QuestionInput } from './question.ts';
import { refusesAnswer } from './refusal.ts';

/**
 * The option keys of a choice question's values, in their order. A value's key is its text (`"red"`,
 * `true` → `"true"`), unless a string and a boolean of the question share a text: then every value
 * of that question is keyed by its JSON text (`"\"true\""` for the string, `"true"` for the
 * boolean), so the model reads them apart and each answer maps back to its typed value.
 */
export function choiceOptionKeys(values: readonly OpenAIChoiceValue[]): string[] {
  const strings = new Set(values.filter((v) => typeof v === 'string'));
  const clash = values.some((v) => typeof v === 'boolean' && strings.has(String(v)));
  return values.map((v) => (clash ? JSON.stringify(v) : String(v)));
}

/** The Jev question keys of the questions, in order: each name, and `question_<i>` for an unnamed one. */
export function questionKeys(questions: readonly OpenAIDecisionQuestion[]): string[] {
  const names = new Set(questions.map((q) => q.name).filter((n): n is string => n !== null));
  return questions.map((q, i) => {
    if (q.name !== null) return q.name;
    let key = `question_${i}`;
    while (names.has(key)) key += '_';
    return key;
  });
}

/** A score level's grade label in the Jev request. */
export function levelLabel(level: { label: string; description: string | null }): string {
  return level.description === null ? level.label : `${level.label}: ${level.description}`;
}

/** One question of OpenAI's shape as the Jev question the engine reads. */
export function toJevQuestion(question: OpenAIDecisionQuestion): QuestionInput {
  switch (question.type) {
    case 'predicate':
      return { type: 'noul', instructions: question.instructions };
    case 'choice': {
      const keys = choiceOptionKeys(question.choices.map((c) => c.value));
      const criteria: Record<string, string | null> = {};
      question.choices.forEach((c, i) => (criteria[keys[i]!] = c.description));
      return { type: 'choice', instructions: question.instructions, criteria };
    }
    case 'score':
      return { type: 'score', instructions: question.instructions, criteria: question.levels.map(levelLabel) };
    default: {
      const never: never = question;
      throw new Error(`unknown question type ${(never as { type: string }).type}`);
    }
  }
}

/** One Jev request and the questions (their indices in the OpenAI request) it carries. */
export interface JevPart {
  body: DecisionRequestInput;
  /** Index in the OpenAI request → key in `body.questions`, for the questions of this part. */
  questions: { index: number; key: string }[];
}

/** The Jev requests an OpenAI request is served by: one, or one per `limits.maxQuestions` questions. */
export function toJevRequests(request: OpenAIDecisionRequest): JevPart[] {
  const keys = questionKeys(request.questions);
  const parts: JevPart[] = [];
  for (let start = 0; start < request.questions.length; start += limits.maxQuestions) {
    const questions: Record<string, QuestionInput> = {};
    const index: JevPart['questions'] = [];
    request.questions.slice(start, start + limits.maxQuestions).forEach((q, j) => {
      const key = keys[start + j]!;
      questions[key] = toJevQuestion(q);
      index.push({ index: start + j, key });
    });
    const body: DecisionRequestInput = { model: 'jev', state: request.state, questions, include: ['answer_mass', 'usage_details'] };
    if (request.calibrate !== undefined) body.calibrate = request.calibrate as DecisionRequestInput['calibrate'];
    if (request.calibration !== undefined) body.calibration = request.calibration as DecisionRequestInput['calibration'];
    parts.push({ body, questions: index });
  }
  return parts;
}

/** The Jev answer to `question`, in OpenAI's shape; a refusal where its label mass is below `floor`. */
export function toOpenAIAnswer(question: OpenAIDecisionQuestion, answer: Answer, floor: number): OpenAIDecisionAnswer {
  const name = question.name;
  if (answer.answer_mass !== undefined && refusesAnswer(answer.answer_mass, floor)) return { type: 'refusal', name };
  if (question.type === 'predicate' && answer.type === 'noul') return { type: 'predicate', name, probability: answer.noul };
  if (question.type === 'choice' && answer.type === 'choice') {
    const keys = choiceOptionKeys(question.choices.map((c) => c.value));
    const chosen = keys.indexOf(answer.choice);
    return {
      type: 'choice',
      name,
      choice: question.choices[chosen]!.value,
      confidence: answer.confidence,
      probabilities: question.choices.map((c, i) => ({ value: c.value, probability: answer.probabilities[keys[i]!]! })),
    };
  }
  if (question.type === 'score' && answer.type === 'score') {
    return {
      type: 'score',
      name,
      score: answer.score,
      confidence: answer.confidence,
      probabilities: question.levels.map((l, i) => ({ label: l.label, value: i, probability: answer.probabilities[String(i)]! })),
    };
  }
  throw new Error(`a ${question.type} question got a ${answer.type} answer`);
}

/** The Jev responses of `toJevRequests(request)`'s parts (in order) as OpenAI's Decision. */
export function toOpenAIDecision(request: OpenAIDecisionRequest, parts: readonly JevPart[], responses: readonly DecisionResponse[], floor: number): OpenAIDecision {
  const answers: OpenAIDecisionAnswer[] = new Array<OpenAIDecisionAnswer>(request.questions.length);
  let input = 0;
  let output = 0;
  let cached = 0;
  let written = 0;
  parts.forEach((part, p) => {
    const response = responses[p]!;
    for (const { index, key } of part.questions) answers[index] = toOpenAIAnswer(request.questions[index]!, response.answers[key]!, floor);
    input += response.usage.input_tokens;
    output += response.usage.output_tokens;
    cached += response.usage.input_tokens_details?.cached_tokens ?? 0;
    written += response.usage.input_tokens_details?.cache_write_tokens ?? 0;
  });
  return {
    id: responses[0]!.id,
    model: responses[0]!.model,
    answers,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: cached, cache_write_tokens: written },
      output_tokens: output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + output,
    },
  };
}

/**
 * A JevError from the Jev request of `part`, with `param` named as in the OpenAI request:
 * `state…` → `input`, `questions.<key>…` → `questions[<index>]` (the Jev question's inner path
 * has no counterpart), anything else (`model`, `calibration…`) as it is.
 */
export function toOpenAIError(error: JevError, part: JevPart): JevError {
  const param = error.param;
  if (param === null) return error;
  let mapped: string | null = null;
  if (param === 'state' || param.startsWith('state.') || param.startsWith('state[')) mapped = 'input';
  else {
    for (const { index, key } of part.questions) {
      const prefix = formatParam(['questions', key])!;
      if (param === prefix || param.startsWith(`${prefix}.`) || param.startsWith(`${prefix}[`)) mapped = `questions[${index}]`;
    }
  }
  if (mapped === null) return error;
  const message = error.message.split(`'${param}'`).join(`'${mapped}'`);
  return new JevError(error.code, message, { param: mapped, ...(error.details ? { details: error.details } : {}), retriable: error.retriable, cause: error });
}
