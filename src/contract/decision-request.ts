/**
 * The decision request: `{ model, state, questions, calibrate?, calibration?, prediction_set?,
 * include? }`, validated and normalized.
 *
 * - `model` must be the string "jev"; another string is `model_not_found` (404).
 * - `state`: see state.ts (a string, text content parts, or any JSON object or array).
 * - `questions`: 1..limits.maxQuestions entries keyed by the caller; see question.ts and
 *   keyed-record.ts (a `__proto__` key is refused; `constructor` is an ordinary key).
 * - `calibrate`: optional boolean (null or omitted: false); our extension: contextual calibration.
 * - `calibration`: optional; our extension: a fitted calibration profile applied to the answers,
 *   by id (a profile saved in the client) or inline (calibration-profile.ts).
 * - `prediction_set`: optional `{ alpha, profile? }`; our extension: each answer also carries the
 *   split-conformal set of answers that covers the truth with probability ≥ 1 − alpha. `profile`
 *   defaults to `calibration`.
 * - `include`: optional list of extra answer fields; our extension. `"answer_mass"`: the share of
 *   the model's next-token probability that fell on the allowed answers. `"prompt"`: the prompt
 *   text the model read for the question and the token ids of each answer's label.
 *   `"usage_details"`: `usage.input_tokens_details` (`cached_tokens`, `cache_write_tokens`: the
 *   prefix cache's reuse and what the request added to it; OpenAI's Decisions shape reads them).
 * - Unknown top-level fields are ignored, except that a body with `messages` and no
 *   `questions` is a chat completion request sent to the wrong endpoint, and is told so.
 */
import './zod-config.ts';
import { z } from 'zod';
import { JevError } from './errors.ts';
import { errorMessages, validationMessage } from './messages.ts';
import { keyedRecord } from './keyed-record.ts';
import { limits } from './limits.ts';
import { calibrationProfileSchema, profileIdSchema, type CalibrationProfile } from './calibration-profile.ts';
import { questionSchema } from './question.ts';
import type { Question } from './question.ts';
import { stateSchema } from './state.ts';
import { addIssue, isPlainObject, parseWith } from './validation.ts';

export type DecisionRequest = {
  model: 'jev';
  /** The rendered context text (never empty). */
  state: string;
  questions: Record<string, Question>;
  calibrate: boolean;
  /** A profile id (resolved by the client that saved it) or the profile itself; null: none. */
  calibration: ProfileRef | null;
  prediction_set: { alpha: number; profile: ProfileRef | null } | null;
  /** Extra answer fields asked for. */
  include: Include[];
};

export type ProfileRef = string | CalibrationProfile;
export const includeValues = ['answer_mass', 'prompt', 'usage_details'] as const;
export type Include = (typeof includeValues)[number];

/** The only model id of the decision endpoint. */
export const decisionModelId = 'jev';

export const decisionModelSchema = z
  .string()
  .superRefine((model, ctx) => {
    if (model !== decisionModelId) addIssue(ctx, 'modelNotFound', [model], { code: 'model_not_found' });
  })
  .transform((): 'jev' => decisionModelId);

export const questionsSchema = keyedRecord(questionSchema, {
  min: 1,
  max: limits.maxQuestions,
  noun: 'questions',
  expected: 'an object mapping question keys to questions',
});

const profileRefSchema = z.union([profileIdSchema, calibrationProfileSchema]);

export const decisionRequestSchema = z.object({
  model: decisionModelSchema,
  state: stateSchema,
  questions: questionsSchema,
  calibrate: z
    .boolean()
    .nullish()
    .transform((v): boolean => v ?? false),
  calibration: profileRefSchema.nullish().transform((v): ProfileRef | null => v ?? null),
  prediction_set: z
    .object({
      alpha: z.number().gt(0).lt(1),
      profile: profileRefSchema.nullish().transform((v): ProfileRef | null => v ?? null),
    })
    .nullish()
    .transform((v) => v ?? null),
  include: z
    .array(z.enum(includeValues))
    .max(includeValues.length * 4)
    .nullish()
    .transform((v): Include[] => [...new Set(v ?? [])]),
});

/** What a client may send (before normalization). */
export type DecisionRequestInput = z.input<typeof decisionRequestSchema>;

/**
 * Validates and normalizes a decision request body (already JSON-parsed).
 * Throws JevError: `invalid_request` (400) naming the field in `param`, or `model_not_found`
 * (404, param `model`).
 */
export function parseDecisionRequest(body: unknown): DecisionRequest {
  if (!isPlainObject(body)) throw new JevError('invalid_request', errorMessages.bodyNotObject(body), { param: null });
  if (Object.hasOwn(body, 'messages') && !Object.hasOwn(body, 'questions')) {
    throw new JevError('invalid_request', validationMessage('chatBodyAtDecisionEndpoint', 'messages', []), {
      param: 'messages',
      details: { path: ['messages'] },
    });
  }
  return parseWith(decisionRequestSchema, body);
}
