/**
 * OpenAI's Decision (the answer of `POST /v1/decisions`), the fields of
 * `openai/resources/decisions.d.ts`. The schemas check what the client produces (tests, fuzzing):
 * answers in question order, each with its `name` (or null); probabilities in [0, 1] that sum to
 * about 1, in the request's order of choices and levels; a choice among its values; integer
 * token counts with `total_tokens = input_tokens + output_tokens`.
 *
 * Our one addition is `id`, the Jev response's request id (quoted when reporting a problem).
 */
import './zod-config.ts';
import { z } from 'zod';
import { probabilitySumTolerance, unitIntervalSchema } from './decision-response.ts';
import { responseCheckMessages } from './messages.ts';
import type { OpenAIChoiceValue } from './openai-decision-request.ts';

export type OpenAIPredicateAnswer = { type: 'predicate'; name: string | null; probability: number };
export type OpenAIChoiceAnswer = {
  type: 'choice';
  name: string | null;
  choice: OpenAIChoiceValue;
  confidence: number;
  probabilities: { value: OpenAIChoiceValue; probability: number }[];
};
export type OpenAIScoreAnswer = {
  type: 'score';
  name: string | null;
  score: number;
  confidence: number;
  /** One per level, in the request's order: `value` is the level's index. */
  probabilities: { label: string; value: number; probability: number }[];
};
/** The question was declined (its label mass was below the floor, docs/decisions.md); the others are answered. */
export type OpenAIRefusalAnswer = { type: 'refusal'; name: string | null };
export type OpenAIDecisionAnswer = OpenAIPredicateAnswer | OpenAIChoiceAnswer | OpenAIScoreAnswer | OpenAIRefusalAnswer;

export type OpenAIDecisionUsage = {
  input_tokens: number;
  /** `cached_tokens`: input tokens read from the prefix cache; `cache_write_tokens`: tokens this request added to it. */
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  /** Always 0: a decision reads label probabilities, it writes no reasoning. */
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
};

export type OpenAIDecision = { id: string; model: string; answers: OpenAIDecisionAnswer[]; usage: OpenAIDecisionUsage };

const nameSchema = z.string().nullable();
const tokenCount = z.int().min(0);
const sumsToOne = (ps: readonly { probability: number }[]) => Math.abs(ps.reduce((a, p) => a + p.probability, 0) - 1) <= probabilitySumTolerance;
const choiceValueSchema = z.union([z.string(), z.boolean()]);

export const openAIPredicateAnswerSchema = z.object({ type: z.literal('predicate'), name: nameSchema, probability: unitIntervalSchema });

export const openAIChoiceAnswerSchema = z
  .object({
    type: z.literal('choice'),
    name: nameSchema,
    choice: choiceValueSchema,
    confidence: unitIntervalSchema,
    probabilities: z.array(z.object({ value: choiceValueSchema, probability: unitIntervalSchema })).min(2),
  })
  .refine((a) => sumsToOne(a.probabilities), { message: responseCheckMessages.probabilitiesSum(probabilitySumTolerance), path: ['probabilities'] })
  .refine((a) => a.probabilities.some((p) => p.value === a.choice), { message: responseCheckMessages.choiceNotAnOption(), path: ['choice'] });

export const openAIScoreAnswerSchema = z
  .object({
    type: z.literal('score'),
    name: nameSchema,
    score: z.number().min(0),
    confidence: unitIntervalSchema,
    probabilities: z.array(z.object({ label: z.string(), value: z.int().min(0), probability: unitIntervalSchema })).min(2),
  })
  .refine((a) => sumsToOne(a.probabilities), { message: responseCheckMessages.probabilitiesSum(probabilitySumTolerance), path: ['probabilities'] })
  .refine((a) => a.probabilities.every((p, i) => p.value === i), { message: 'probabilities must list the levels in order, value i at index i', path: ['probabilities'] })
  .refine((a) => a.score <= a.probabilities.length - 1 + 1e-9, { message: responseCheckMessages.scoreAboveTop(), path: ['score'] });

export const openAIRefusalAnswerSchema = z.object({ type: z.literal('refusal'), name: nameSchema });

export const openAIDecisionAnswerSchema = z.discriminatedUnion('type', [
  openAIPredicateAnswerSchema,
  openAIChoiceAnswerSchema,
  openAIScoreAnswerSchema,
  openAIRefusalAnswerSchema,
]);

export const openAIDecisionUsageSchema = z
  .object({
    input_tokens: tokenCount,
    input_tokens_details: z.object({ cached_tokens: tokenCount, cache_write_tokens: tokenCount }),
    output_tokens: tokenCount,
    output_tokens_details: z.object({ reasoning_tokens: tokenCount }),
    total_tokens: tokenCount,
  })
  .refine((u) => u.total_tokens === u.input_tokens + u.output_tokens, { message: 'total_tokens must equal input_tokens + output_tokens', path: ['total_tokens'] })
  .refine((u) => u.input_tokens_details.cached_tokens <= u.input_tokens, { message: 'cached_tokens must not exceed input_tokens', path: ['input_tokens_details'] });

export const openAIDecisionSchema = z.object({
  id: z.string().min(1),
  model: z.string().min(1),
  answers: z.array(openAIDecisionAnswerSchema).min(1),
  usage: openAIDecisionUsageSchema,
});
