/**
 * OpenAI's Decisions request (`POST /v1/decisions`, `openai.decisions.create`), the fields of
 * `openai/resources/decisions.d.ts`, validated and normalized. docs/decisions.md, "OpenAI's shape".
 *
 * - `model`: a non-empty string; `jev` or the loaded model's id (checked by the client, which knows
 *   the model; anything else is `model_not_found`, 404).
 * - `input`: a string or an array of messages and tool items, rendered to the state text
 *   (openai-decision-input.ts).
 * - `questions`: 1..`limits.maxOpenAIDecisionQuestions`, in order:
 *   - `predicate`: `instructions`, `name?`;
 *   - `choice`: `choices: [{ value: string | boolean, description? }]`, 2..`limits.maxOptions`
 *     unique values (a string and a boolean with the same text are distinct);
 *   - `score`: `levels: [{ label, description? }]`, `limits.minGrades`..`limits.maxGrades`.
 *   `instructions` is a string or input_text / input_json parts. A `name` is non-empty, unique in
 *   the request and not `__proto__`: it is the question's key in the Jev request the engine serves.
 * - `prompt_cache_key`, `prompt_cache_options` are accepted (the prefix cache keys by tokens, not
 *   by these; docs/decisions.md); `safety_identifier` is accepted and ignored.
 * - Our extensions, as in the Jev request and validated there: `calibrate`, `calibration`.
 * - Unknown fields are ignored.
 */
import './zod-config.ts';
import { z } from 'zod';
import { JevError } from './errors.ts';
import { errorMessages } from './messages.ts';
import { limits } from './limits.ts';
import { decisionInputSchema, decisionInstructionsSchema } from './openai-decision-input.ts';
import { descriptionSchema, gradeLabelSchema } from './question.ts';
import { addIssue, isPlainObject, lengthBetween, parseWith } from './validation.ts';

export type OpenAIChoiceValue = string | boolean;
export type OpenAIPredicateQuestion = { type: 'predicate'; name: string | null; instructions: string };
export type OpenAIChoiceQuestion = {
  type: 'choice';
  name: string | null;
  instructions: string;
  choices: { value: OpenAIChoiceValue; description: string | null }[];
};
export type OpenAIScoreQuestion = {
  type: 'score';
  name: string | null;
  instructions: string;
  levels: { label: string; description: string | null }[];
};
export type OpenAIDecisionQuestion = OpenAIPredicateQuestion | OpenAIChoiceQuestion | OpenAIScoreQuestion;

export type OpenAIDecisionRequest = {
  model: string;
  /** `input` rendered: the text the Jev request's `state` carries. */
  state: string;
  questions: OpenAIDecisionQuestion[];
  prompt_cache_key: string | null;
  prompt_cache_options: { mode: 'implicit' | 'explicit' | null; ttl: '30m' } | null;
  /** Our extensions, passed to the Jev request as they came (absent: undefined). */
  calibrate?: unknown;
  calibration?: unknown;
};

const nameSchema = z
  .string()
  .min(1)
  .max(limits.maxKeyChars)
  .superRefine((name, ctx) => {
    if (name === '__proto__') addIssue(ctx, 'reservedKey', []);
  })
  .nullish()
  .transform((v): string | null => v ?? null);

const choiceValueSchema = z.custom<OpenAIChoiceValue>().superRefine((raw: unknown, ctx) => {
  if (typeof raw === 'boolean') return;
  if (typeof raw !== 'string') {
    if (raw === undefined) addIssue(ctx, 'required', []);
    else addIssue(ctx, 'wrongType', ['a string or a boolean', raw]);
  } else if (raw === '') addIssue(ctx, 'emptyString', []);
  else if (raw.length > limits.maxKeyChars) addIssue(ctx, 'stringTooLong', [limits.maxKeyChars, raw.length]);
  else if (raw === '__proto__') addIssue(ctx, 'reservedKey', []);
});

/** A list of `min`..`max` items (counted before any is parsed), each parsed by `item`. */
function listOf<S extends z.ZodType>(item: S, min: number, max: number, noun: string) {
  return z
    .custom<unknown[]>()
    .superRefine((raw: unknown, ctx) => {
      if (raw === undefined) return addIssue(ctx, 'required', []);
      if (!Array.isArray(raw)) return addIssue(ctx, 'wrongType', [`an array of ${noun}`, raw]);
      lengthBetween(ctx, raw.length, min, max, noun);
    })
    .pipe(z.array(item));
}

/** Reports the second of two items whose `keyOf` is equal, at `[index, field]`. */
function unique<T>(items: readonly T[], keyOf: (item: T) => unknown, field: string, noun: string, ctx: Pick<z.core.$RefinementCtx, 'addIssue'>, prefix: string) {
  const seen = new Map<unknown, number>();
  items.forEach((item, i) => {
    const key = keyOf(item);
    if (key === null) return;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, i);
    else addIssue(ctx, 'duplicateInList', [noun, `${prefix}[${first}].${field}`], { path: [i, field] });
  });
}

const predicateSchema = z.object({
  type: z.literal('predicate'),
  name: nameSchema,
  instructions: decisionInstructionsSchema,
});

const choiceSchema = z.object({
  type: z.literal('choice'),
  name: nameSchema,
  instructions: decisionInstructionsSchema,
  choices: listOf(z.object({ value: choiceValueSchema, description: descriptionSchema }), limits.minOptions, limits.maxOptions, 'choices').superRefine(
    (choices, ctx) => unique(choices, (c) => `${typeof c.value}:${String(c.value)}`, 'value', 'the value', ctx, 'choices'),
  ),
});

const levelSchema = z
  .object({ label: gradeLabelSchema, description: descriptionSchema })
  .superRefine((level, ctx) => {
    // The level's grade label in the Jev request is `label: description` (openai-decision-adapter.ts).
    const length = level.label.length + (level.description === null ? 0 : level.description.length + 2);
    if (length > limits.maxTextChars) addIssue(ctx, 'stringTooLong', [limits.maxTextChars, length], { path: ['description'] });
  });

const scoreSchema = z.object({
  type: z.literal('score'),
  name: nameSchema,
  instructions: decisionInstructionsSchema,
  levels: listOf(levelSchema, limits.minGrades, limits.maxGrades, 'levels'),
});

const questionSchema = z.discriminatedUnion('type', [predicateSchema, choiceSchema, scoreSchema]);

export const openAIDecisionRequestSchema = z.object({
  model: z.string().min(1).max(limits.maxKeyChars),
  input: decisionInputSchema,
  questions: listOf(questionSchema, 1, limits.maxOpenAIDecisionQuestions, 'questions').superRefine((questions, ctx) =>
    unique(questions, (q) => q.name, 'name', 'the name', ctx, 'questions'),
  ),
  prompt_cache_key: z
    .string()
    .max(limits.maxKeyChars)
    .nullish()
    .transform((v) => v ?? null),
  prompt_cache_options: z
    .object({ mode: z.enum(['implicit', 'explicit']).nullish().transform((v) => v ?? null), ttl: z.literal('30m').optional().transform((): '30m' => '30m') })
    .nullish()
    .transform((v) => v ?? null),
  safety_identifier: z.string().max(limits.maxKeyChars).nullish(),
});

/** What a client may send (before normalization): OpenAI's `DecisionCreateParams`, and our extensions. */
export type OpenAIDecisionRequestInput = z.input<typeof openAIDecisionRequestSchema> & { calibrate?: unknown; calibration?: unknown };

/**
 * Validates and normalizes a request of OpenAI's Decisions shape (already JSON-parsed). Throws
 * JevError `invalid_request` (400) naming the field in `param` (`questions[2].choices[0].value`).
 */
export function parseOpenAIDecisionRequest(body: unknown): OpenAIDecisionRequest {
  if (!isPlainObject(body)) throw new JevError('invalid_request', errorMessages.bodyNotObject(body), { param: null });
  const parsed = parseWith(openAIDecisionRequestSchema, body);
  const out: OpenAIDecisionRequest = {
    model: parsed.model,
    state: parsed.input,
    questions: parsed.questions,
    prompt_cache_key: parsed.prompt_cache_key,
    prompt_cache_options: parsed.prompt_cache_options,
  };
  if (Object.hasOwn(body, 'calibrate')) out.calibrate = body['calibrate'];
  if (Object.hasOwn(body, 'calibration')) out.calibration = body['calibration'];
  return out;
}
