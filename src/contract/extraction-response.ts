/**
 * The extraction response: one answer per field key, under `answers`, in the shape of the AI
 * SDK's `ExtractionModelV4Answer` (so the provider passes it through), plus `id`, `model`,
 * `provider` and `usage` as a decision response has them.
 *
 * A value answer: `{ type, value, guess, pNull, confidence, source }`
 * - `value`: the decoded value, or null when `pNull` ≥ 0.5 (the state most likely does not give it);
 * - `guess`: the decoded value, also when `value` is null;
 * - `pNull`: the probability of the "absent" answer (`null`) against any well-typed value;
 * - `confidence`: the probability of `guess` under the type's constrained distribution, given that
 *   the field is present (the product of each chosen token's probability renormalised over the
 *   tokens the type allowed there; docs/extraction.md);
 * - `source`: `{ type: "text", part, start, end }` (UTF-16 offsets into that text part, end
 *   exclusive) where the value's text is found in the state, or absent where it is not.
 * A list answer: `{ type: "list", value, guess, pNull, confidence, items?: [{ confidence, source? }] }`,
 * `items` one per entry of `value` (absent where `value` is null, as the AI SDK checks).
 * A field the engine could not decode (no well-typed value can be written with the model's
 * tokens) is `{ type: "refusal" }`.
 */
import './zod-config.ts';
import { z } from 'zod';
import { unitIntervalSchema, usageSchema, type Usage } from './decision-response.ts';

export type ExtractionSource = { type: 'text'; part: number; start: number; end: number };
type ValueAnswer<T extends string, V> = {
  type: T;
  value: V | null;
  guess: V;
  pNull: number;
  confidence: number;
  source?: ExtractionSource | undefined;
};
export type ListItemAnswer = { confidence: number; source?: ExtractionSource | undefined };
export type ListAnswer = {
  type: 'list';
  value: string[] | number[] | null;
  guess: string[] | number[];
  pNull: number;
  confidence: number;
  /** One per entry of `value`; absent where `value` is null. */
  items?: ListItemAnswer[] | undefined;
};
export type ExtractionAnswer =
  | ValueAnswer<'text', string>
  | ValueAnswer<'number', number>
  | ValueAnswer<'date', string>
  | ValueAnswer<'time', string>
  | ValueAnswer<'datetime', string>
  | ValueAnswer<'duration', number>
  | ListAnswer
  | { type: 'refusal' };

export type ExtractionResponse = {
  id: string;
  object: 'extraction';
  model: string;
  provider: string;
  answers: Record<string, ExtractionAnswer>;
  usage: Usage;
};

export const extractionSourceSchema = z.object({
  type: z.literal('text'),
  part: z.int().min(0),
  start: z.int().min(0),
  end: z.int().min(0),
}).refine((s) => s.end > s.start, { message: 'a source spans at least one character', path: ['end'] });

const common = { pNull: unitIntervalSchema, confidence: unitIntervalSchema, source: extractionSourceSchema.optional() };
const finite = z.number().refine(Number.isFinite);

export const extractionAnswerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), value: z.string().min(1).nullable(), guess: z.string().min(1), ...common }),
  z.object({ type: z.literal('number'), value: finite.nullable(), guess: finite, ...common }),
  z.object({ type: z.literal('date'), value: z.string().nullable(), guess: z.string(), ...common }),
  z.object({ type: z.literal('time'), value: z.string().nullable(), guess: z.string(), ...common }),
  z.object({ type: z.literal('datetime'), value: z.string().nullable(), guess: z.string(), ...common }),
  z.object({ type: z.literal('duration'), value: finite.min(0).nullable(), guess: finite.min(0), ...common }),
  z.object({
    type: z.literal('list'),
    value: z.union([z.array(z.string()), z.array(finite)]).nullable(),
    guess: z.union([z.array(z.string()), z.array(finite)]),
    pNull: unitIntervalSchema,
    confidence: unitIntervalSchema,
    items: z.array(z.object({ confidence: unitIntervalSchema, source: extractionSourceSchema.optional() })).optional(),
  }).refine((a) => (a.value === null ? a.items === undefined : a.items?.length === a.value.length), { message: 'items: one per entry of value, none where value is null', path: ['items'] }),
  z.object({ type: z.literal('refusal') }),
]);

export const extractionResponseSchema = z.object({
  id: z.string().min(1),
  object: z.literal('extraction'),
  model: z.string().min(1),
  provider: z.string(),
  answers: z.record(z.string(), extractionAnswerSchema),
  usage: usageSchema,
});
