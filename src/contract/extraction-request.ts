/**
 * The extraction request (`POST /v1/extractions`, `client.extractions.create`): typed values
 * pulled out of one state. Its shape mirrors the Vercel AI SDK's `ExtractionModelV4CallOptions`
 * (`@ai-sdk/provider`), so that the provider passes `experimental_extract`'s call through as it is:
 *
 *     { model: "jev", state, fields: { key: Field }, referenceDate?: "YYYY-MM-DD" }
 *
 * - `model` must be the string "jev" (as for decisions); another string is `model_not_found` (404).
 * - `state`: a string (one text part, part 0), or an array of parts `{type:"text", text}` and
 *   `{type:"json", value}` (the AI SDK's `DecisionModelV4State`; other keys of a part, such as
 *   `providerOptions`, are ignored). A `file` part is refused (400): this engine reads text. The
 *   model reads the parts joined with "\n", a JSON part rendered as decision states render JSON
 *   (keys sorted, 2-space indentation), so a state of text parts reads exactly as the same state
 *   sent to `/v1/decisions` and shares its prefix cache. Sources index into this array.
 * - `fields`: 1..limits.maxFields entries keyed by the caller (keyed-record.ts). Field types and
 *   options are the AI SDK's `ExtractionModelV4Field`:
 *   - `text`; `date` (YYYY-MM-DD); `time` (HH:MM or HH:MM:SS); `datetime` (ISO 8601);
 *   - `number`: `unit?` (a string the prompt names), `integer?`, `decimals?` (an integer 0–6;
 *     default 6, or 0 when `integer`);
 *   - `duration`: `unit?` (seconds, minutes, hours, days, weeks, months, years; default seconds),
 *     `integer?`, `decimals?` as for numbers; the value is non-negative;
 *   - `list`: `items` ("text", "number" or "date"), and for number items `integer?`, `decimals?`.
 *   Every field may carry `instructions`: a string, a JSON object or array (rendered as JSON
 *   text), or null.
 * - `referenceDate`: optional `YYYY-MM-DD`, a real calendar date; it anchors relative and
 *   year-less dates, and the prompt says so. Omitted or null: none (the prompt asks for the date
 *   as written).
 * - Unknown top-level fields are ignored (`maxOutputTokens`, `providerOptions`, … from the SDK).
 */
import './zod-config.ts';
import { z } from 'zod';
import { JevError } from './errors.ts';
import { errorMessages } from './messages.ts';
import { decisionModelSchema } from './decision-request.ts';
import { keyedRecord } from './keyed-record.ts';
import { limits } from './limits.ts';
import { jsonDataTextSchema } from './state.ts';
import { addIssue, isPlainObject, parseWith } from './validation.ts';

export const fieldTypes = ['text', 'number', 'date', 'time', 'datetime', 'duration', 'list'] as const;
export type FieldType = (typeof fieldTypes)[number];
export const durationUnits = ['seconds', 'minutes', 'hours', 'days', 'weeks', 'months', 'years'] as const;
export type DurationUnit = (typeof durationUnits)[number];
export const listItemTypes = ['text', 'number', 'date'] as const;
export type ListItemType = (typeof listItemTypes)[number];

/** The most decimal places a number may be asked for (the AI SDK's bound). */
export const maxDecimals = 6;
/** Fields in one extraction request (each one decoded in turn after the shared state). */
export const maxFields = 64;

/** How a number is written: at most `decimals` places after the point (0: an integer). */
export type NumberFormat = { integer: boolean; decimals: number };

export type TextField = { type: 'text'; instructions: string };
export type NumberField = { type: 'number'; instructions: string; unit: string | null } & NumberFormat;
export type DateField = { type: 'date'; instructions: string };
export type TimeField = { type: 'time'; instructions: string };
export type DateTimeField = { type: 'datetime'; instructions: string };
export type DurationField = { type: 'duration'; instructions: string; unit: DurationUnit } & NumberFormat;
export type ListField = { type: 'list'; instructions: string; items: ListItemType } & NumberFormat;
export type ExtractionField = TextField | NumberField | DateField | TimeField | DateTimeField | DurationField | ListField;

/** One part of the state as the engine reads it: its own text (a JSON part's rendering) and what it was. */
export type StatePartText = { type: 'text' | 'json'; text: string };

export type ExtractionRequest = {
  model: 'jev';
  /** The parts joined with "\n": the text the model reads (never blank). */
  state: string;
  /** Each part's text, in the caller's order (a string state is one text part). */
  parts: StatePartText[];
  fields: Record<string, ExtractionField>;
  /** YYYY-MM-DD, or null. */
  referenceDate: string | null;
};

/** Whether `s` is a real calendar date written YYYY-MM-DD (proleptic Gregorian, years 0000–9999). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const instructionsInput = z
  .unknown()
  .optional()
  .transform((raw, ctx): string => {
    if (raw === undefined || raw === null) return '';
    if (typeof raw === 'string') {
      if (raw.length > limits.maxTextChars) addIssue(ctx, 'stringTooLong', [limits.maxTextChars, raw.length]);
      return raw;
    }
    const parsed = jsonDataTextSchema.safeParse(raw);
    if (!parsed.success) {
      addIssue(ctx, 'wrongType', ['a string, a JSON object or array, or null', raw]);
      return z.NEVER;
    }
    return parsed.data;
  });

const decimalsSchema = z.int().min(0).max(maxDecimals).nullish();
const integerSchema = z.boolean().nullish();

function numberFormat(v: { integer?: boolean | null | undefined; decimals?: number | null | undefined }): NumberFormat {
  const integer = v.integer ?? false;
  return { integer, decimals: integer ? 0 : (v.decimals ?? maxDecimals) };
}

const textFieldSchema = z.object({ type: z.literal('text'), instructions: instructionsInput });
const numberFieldSchema = z
  .object({
    type: z.literal('number'),
    instructions: instructionsInput,
    unit: z.string().max(limits.maxKeyChars).nullish(),
    integer: integerSchema,
    decimals: decimalsSchema,
  })
  .transform((f): NumberField => ({ type: 'number', instructions: f.instructions, unit: f.unit || null, ...numberFormat(f) }));
const dateFieldSchema = z.object({ type: z.literal('date'), instructions: instructionsInput });
const timeFieldSchema = z.object({ type: z.literal('time'), instructions: instructionsInput });
const dateTimeFieldSchema = z.object({ type: z.literal('datetime'), instructions: instructionsInput });
const durationFieldSchema = z
  .object({
    type: z.literal('duration'),
    instructions: instructionsInput,
    unit: z.enum(durationUnits).nullish(),
    integer: integerSchema,
    decimals: decimalsSchema,
  })
  .transform((f): DurationField => ({ type: 'duration', instructions: f.instructions, unit: f.unit ?? 'seconds', ...numberFormat(f) }));
const listFieldSchema = z
  .object({
    type: z.literal('list'),
    instructions: instructionsInput,
    items: z.enum(listItemTypes),
    integer: integerSchema,
    decimals: decimalsSchema,
  })
  .transform((f): ListField => ({ type: 'list', instructions: f.instructions, items: f.items, ...numberFormat(f) }));

/** A field; an unknown `type` is refused naming `fields.<key>.type` and the types there are. */
export const extractionFieldSchema = z
  .custom<Record<string, unknown>>()
  .superRefine((raw: unknown, ctx) => {
    if (!isPlainObject(raw)) return addIssue(ctx, 'wrongType', ['a field object with a "type"', raw]);
    const type = raw['type'];
    if (typeof type !== 'string' || !(fieldTypes as readonly string[]).includes(type)) {
      addIssue(ctx, 'oneOf', [fieldTypes, type], { path: ['type'] });
    }
  })
  .pipe(
    z.discriminatedUnion('type', [
      textFieldSchema,
      numberFieldSchema,
      dateFieldSchema,
      timeFieldSchema,
      dateTimeFieldSchema,
      durationFieldSchema,
      listFieldSchema,
    ]),
  ) as unknown as z.ZodType<ExtractionField, ExtractionFieldInput>;

export const fieldsSchema = keyedRecord(extractionFieldSchema, {
  min: 1,
  max: maxFields,
  noun: 'fields',
  expected: 'an object mapping field keys to fields',
});

/** The state as parts: a string is one text part; a `file` part is refused, naming it. */
export const extractionStateSchema = z.custom<unknown>().transform((raw, ctx): StatePartText[] => {
  if (typeof raw === 'string') return [{ type: 'text', text: raw }];
  if (raw === undefined) {
    addIssue(ctx, 'required', []);
    return z.NEVER;
  }
  if (!Array.isArray(raw)) {
    addIssue(ctx, 'wrongType', ['a string or an array of text and json parts', raw]);
    return z.NEVER;
  }
  if (raw.length === 0) {
    addIssue(ctx, 'stateEmpty', []);
    return z.NEVER;
  }
  const parts: StatePartText[] = [];
  for (let i = 0; i < raw.length; i++) {
    const part: unknown = raw[i];
    if (!isPlainObject(part)) {
      addIssue(ctx, 'wrongType', ['a part object ({"type":"text","text":…} or {"type":"json","value":…})', part], { path: [i] });
      return z.NEVER;
    }
    if (part['type'] === 'text') {
      if (typeof part['text'] !== 'string') {
        addIssue(ctx, 'wrongType', ['a string', part['text']], { path: [i, 'text'] });
        return z.NEVER;
      }
      parts.push({ type: 'text', text: part['text'] });
    } else if (part['type'] === 'json') {
      const value: unknown = part['value'];
      let text: string;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null) {
        if (typeof value === 'number' && !Number.isFinite(value)) {
          addIssue(ctx, 'notFinite', [value], { path: [i, 'value'] });
          return z.NEVER;
        }
        text = JSON.stringify(value);
      } else {
        const rendered = jsonDataTextSchema.safeParse(value);
        if (!rendered.success) {
          addIssue(ctx, 'notJsonData', [value], { path: [i, 'value'] });
          return z.NEVER;
        }
        text = rendered.data;
      }
      parts.push({ type: 'json', text });
    } else {
      addIssue(ctx, 'oneOf', [['text', 'json'], part['type']], { path: [i, 'type'] });
      return z.NEVER;
    }
  }
  return parts;
});

export const referenceDateSchema = z
  .string()
  .superRefine((s, ctx) => {
    if (!isCalendarDate(s)) addIssue(ctx, 'wrongType', ['a real calendar date written YYYY-MM-DD', s]);
  })
  .nullish()
  .transform((v): string | null => v ?? null);

export const extractionRequestSchema = z.object({
  model: decisionModelSchema,
  state: extractionStateSchema,
  fields: fieldsSchema,
  referenceDate: referenceDateSchema,
});

export type ExtractionFieldInput =
  | { type: 'text'; instructions?: unknown }
  | { type: 'number'; instructions?: unknown; unit?: string | null; integer?: boolean | null; decimals?: number | null }
  | { type: 'date' | 'time' | 'datetime'; instructions?: unknown }
  | { type: 'duration'; instructions?: unknown; unit?: DurationUnit | null; integer?: boolean | null; decimals?: number | null }
  | { type: 'list'; instructions?: unknown; items: ListItemType; integer?: boolean | null; decimals?: number | null };

/** What a client may send (before normalization). */
export type ExtractionRequestInput = {
  model: string;
  state: string | readonly ({ type: 'text'; text: string } | { type: 'json'; value: unknown })[];
  fields: Record<string, ExtractionFieldInput>;
  referenceDate?: string | null | undefined;
};

/**
 * Validates and normalizes an extraction request body (already JSON-parsed). Throws JevError:
 * `invalid_request` (400) naming the field in `param`, or `model_not_found` (404, param `model`).
 */
export function parseExtractionRequest(body: unknown): ExtractionRequest {
  if (!isPlainObject(body)) throw new JevError('invalid_request', errorMessages.bodyNotObject(body), { param: null });
  const parsed = parseWith(extractionRequestSchema, body);
  const state = parsed.state.map((p) => p.text).join('\n');
  if (state.length > limits.maxStateChars) {
    throw new JevError('invalid_request', `'state' renders to ${state.length} characters; at most ${limits.maxStateChars} are read.`, { param: 'state' });
  }
  if (state.trim() === '') throw new JevError('invalid_request', "'state' must not be empty: give the text or parts to read.", { param: 'state' });
  return { model: parsed.model, state, parts: parsed.state, fields: parsed.fields, referenceDate: parsed.referenceDate };
}
