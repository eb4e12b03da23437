/**
 * The decision response: one answer per question key, under `answers`. These schemas check what
 * the engine produces (in tests and at the facade), including the specification's ranges:
 * noul and confidence in [0, 1], probabilities in [0, 1] summing to about 1, a choice among the
 * probabilities' keys, a score between 0 and the highest grade index, integer token counts ≥ 0.
 */
import './zod-config.ts';
import { z } from 'zod';
import { responseCheckMessages } from './messages.ts';

/**
 * Fields an answer carries only when the request asks (our extensions):
 * - `answer_mass` (`include: ["answer_mass"]`): the share of the model's next-token probability
 *   that fell on the allowed answers, before renormalising over them (0..1).
 * - `prediction_set` (`prediction_set: { alpha }`): the answers (noul `true`/`false`, choice option
 *   keys, score grade indices) whose set covers the expected answer with probability ≥ 1 − alpha.
 * - `prompt` (`include: ["prompt"]`): what the model read for the question (AnswerPrompt).
 */
/**
 * The prompt of one question: `text` is decoded from the token ids fed before the answer (the
 * state's and the question's, special tokens written out), so that tokenizing it again gives
 * those ids; `label_token_ids` maps each answer (noul `true`/`false`, choice option key, score
 * grade index) to the token-id paths scored for it after the prompt, one per way of writing it
 * (noul: `true` and `True`, `false` and `False`).
 */
export type AnswerPrompt = { text: string; label_token_ids: Record<string, number[][]> };
export type NoulAnswer = {
  type: 'noul';
  noul: number;
  answer_mass?: number | undefined;
  prediction_set?: string[] | undefined;
  prompt?: AnswerPrompt | undefined;
};
export type ChoiceAnswer = {
  type: 'choice';
  choice: string;
  probabilities: Record<string, number>;
  confidence: number;
  answer_mass?: number | undefined;
  prediction_set?: string[] | undefined;
  prompt?: AnswerPrompt | undefined;
};
export type ScoreAnswer = {
  type: 'score';
  score: number;
  /** Grade index (as a string) → grade label. */
  legend: Record<string, string>;
  /** Grade index (as a string) → probability. */
  probabilities: Record<string, number>;
  confidence: number;
  answer_mass?: number | undefined;
  prediction_set?: string[] | undefined;
  prompt?: AnswerPrompt | undefined;
};
export type Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer;
/**
 * `input_tokens_details` only with `include: ["usage_details"]` (our extension): `cached_tokens`,
 * the input tokens read from the prefix cache instead of fed; `cache_write_tokens`, the tokens this
 * request added to it (0 where there is no cache, on q8, or on a server: docs/prefix-cache.md).
 */
export type UsageDetails = { cached_tokens: number; cache_write_tokens: number };
export type Usage = { input_tokens: number; output_tokens: number; cost: number; input_tokens_details?: UsageDetails | undefined };
export type DecisionResponse = { id: string; model: string; provider: string; answers: Record<string, Answer>; usage: Usage };

/** How far from 1 a probability map's sum may be ("sums to roughly 1"). */
export const probabilitySumTolerance = 0.02;

export const unitIntervalSchema = z.number().min(0).max(1);
export const probabilitiesSchema = z
  .record(z.string(), unitIntervalSchema)
  .refine((p) => Math.abs(Object.values(p).reduce((a, b) => a + b, 0) - 1) <= probabilitySumTolerance, {
    message: responseCheckMessages.probabilitiesSum(probabilitySumTolerance),
  });

export const answerPromptSchema = z.object({
  text: z.string().min(1),
  label_token_ids: z.record(z.string(), z.array(z.array(z.int().min(0)).min(1)).min(1)),
});

const extras = {
  answer_mass: unitIntervalSchema.optional(),
  prediction_set: z.array(z.string()).min(1).optional(),
  prompt: answerPromptSchema.optional(),
};

export const noulAnswerSchema = z.object({ type: z.literal('noul'), noul: unitIntervalSchema, ...extras });

export const choiceAnswerSchema = z
  .object({
    type: z.literal('choice'),
    choice: z.string(),
    probabilities: probabilitiesSchema,
    confidence: unitIntervalSchema,
    ...extras,
  })
  .refine((a) => Object.hasOwn(a.probabilities, a.choice), {
    message: responseCheckMessages.choiceNotAnOption(),
    path: ['choice'],
  });

export const scoreAnswerSchema = z
  .object({
    type: z.literal('score'),
    score: z.number().min(0),
    legend: z.record(z.string(), z.string()),
    probabilities: probabilitiesSchema,
    confidence: unitIntervalSchema,
    ...extras,
  })
  .refine((a) => Object.keys(a.probabilities).every((k) => Object.hasOwn(a.legend, k)), {
    message: responseCheckMessages.probabilitiesNotLegend(),
    path: ['probabilities'],
  })
  // A tiny excess is float rounding of Σ index · p.
  .refine((a) => a.score <= Math.max(0, Object.keys(a.legend).length - 1) + 1e-9, {
    message: responseCheckMessages.scoreAboveTop(),
    path: ['score'],
  });

export const answerSchema = z.discriminatedUnion('type', [noulAnswerSchema, choiceAnswerSchema, scoreAnswerSchema]);

export const usageSchema = z.object({
  input_tokens: z.int().min(0),
  output_tokens: z.int().min(0),
  cost: z.number().min(0),
  input_tokens_details: z.object({ cached_tokens: z.int().min(0), cache_write_tokens: z.int().min(0) }).optional(),
});

export const decisionResponseSchema = z.object({
  id: z.string().min(1),
  model: z.string().min(1),
  provider: z.string(),
  answers: z.record(z.string(), answerSchema),
  usage: usageSchema,
});
