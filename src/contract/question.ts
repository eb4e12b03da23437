/**
 * The three question types of a decision request, as received (input) and as the engine reads
 * them (output). Normalization, for compatibility with the Jev service and its clients:
 * - `instructions` may be omitted or null: it becomes "".
 * - noul `criteria` may be omitted, null, or hold only one of `true`/`false` (the Vercel AI SDK
 *   maps its `boolean` type to noul without criteria): a missing description becomes null. Any
 *   key other than `true` and `false` is refused, naming it.
 * - A description (noul or choice) that is null or "" becomes null: the key alone is read.
 * - Unknown fields of a question are ignored.
 */
import './zod-config.ts';
import { z } from 'zod';
import { keyedRecord } from './keyed-record.ts';
import { limits } from './limits.ts';
import { addIssue, isPlainObject, lengthBetween } from './validation.ts';

export type NoulQuestion = { type: 'noul'; instructions: string; criteria: { true: string | null; false: string | null } };
/**
 * Option key → description (null: the key alone is read). Keys are in JavaScript property order:
 * the caller's order, except that integer-like keys ("1", "2") come first, ascending.
 */
export type ChoiceQuestion = { type: 'choice'; instructions: string; criteria: Record<string, string | null> };
/** Ordered grade labels: index i scores i. */
export type ScoreQuestion = { type: 'score'; instructions: string; criteria: string[] };
export type Question = NoulQuestion | ChoiceQuestion | ScoreQuestion;
export type QuestionType = Question['type'];

export const questionTypes = ['noul', 'choice', 'score'] as const satisfies readonly QuestionType[];

export const instructionsSchema = z
  .string()
  .max(limits.maxTextChars)
  .nullish()
  .transform((v): string => v ?? '');

export const descriptionSchema = z
  .string()
  .max(limits.maxTextChars)
  .nullish()
  .transform((v): string | null => (v === undefined || v === null || v === '' ? null : v));

const noulCriteriaKeys: readonly string[] = ['true', 'false'];

export const noulCriteriaSchema = z
  .custom<{ true?: string | null | undefined; false?: string | null | undefined }>()
  .superRefine((raw: unknown, ctx) => {
    if (!isPlainObject(raw)) return;
    for (const key of Object.keys(raw)) {
      if (noulCriteriaKeys.includes(key)) continue;
      if (key.length > limits.maxKeyChars) addIssue(ctx, 'keyTooLong', [limits.maxKeyChars, key.length]);
      else addIssue(ctx, 'noulCriteriaKey', [], { path: [key] });
    }
  })
  .pipe(z.object({ true: descriptionSchema, false: descriptionSchema }))
  .nullish()
  .transform((c): NoulQuestion['criteria'] => ({ true: c?.true ?? null, false: c?.false ?? null }));

export const choiceCriteriaSchema = keyedRecord(descriptionSchema, {
  min: limits.minOptions,
  max: limits.maxOptions,
  noun: 'options',
  expected: 'an object mapping option keys to descriptions',
});

export const gradeLabelSchema = z.string().min(1).max(limits.maxTextChars);

export const scoreCriteriaSchema = z
  .custom<string[]>()
  .superRefine((raw: unknown, ctx) => {
    if (raw === undefined) return addIssue(ctx, 'required', []);
    if (!Array.isArray(raw)) return addIssue(ctx, 'wrongType', ['an array of grade-label strings', raw]);
    lengthBetween(ctx, raw.length, limits.minGrades, limits.maxGrades, 'grade labels');
  })
  .pipe(z.array(gradeLabelSchema));

export const noulQuestionSchema = z.object({
  type: z.literal('noul'),
  instructions: instructionsSchema,
  criteria: noulCriteriaSchema,
});

export const choiceQuestionSchema = z.object({
  type: z.literal('choice'),
  instructions: instructionsSchema,
  criteria: choiceCriteriaSchema,
});

export const scoreQuestionSchema = z.object({
  type: z.literal('score'),
  instructions: instructionsSchema,
  criteria: scoreCriteriaSchema,
});

export const questionSchema = z.discriminatedUnion('type', [noulQuestionSchema, choiceQuestionSchema, scoreQuestionSchema]);

export type QuestionInput = z.input<typeof questionSchema>;
