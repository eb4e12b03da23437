/**
 * `response_format`, OpenAI's shape: `{type:"text"}` (the default: free text),
 * `{type:"json_object"}` (any JSON object) or `{type:"json_schema", json_schema:{name,
 * description?, schema, strict?}}` (JSON that validates against `schema`). The schema may use only
 * the subset the engine enforces exactly (json-schema-subset.ts); `strict` is read and kept, and
 * the schema is enforced whatever it says (docs/structured-output.md).
 */
import './zod-config.ts';
import { z } from 'zod';
import { checkSchemaSubset, type JsonSchema } from './json-schema-subset.ts';
import { limits } from './limits.ts';
import type { PathSegment } from './param-path.ts';
import { addIssue, isPlainObject } from './validation.ts';

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: JsonSchemaFormat };

export interface JsonSchemaFormat {
  /** 1–64 characters of a-z, A-Z, 0-9, `_` and `-`. */
  name: string;
  description?: string;
  schema: JsonSchema;
  /** OpenAI's switch; false when omitted or null. The schema is enforced either way. */
  strict: boolean;
}

export const responseFormatTypes = ['text', 'json_object', 'json_schema'] as const;

/** OpenAI's rule for a schema's and a function's name. */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

type Ctx = z.core.$RefinementCtx;

/** A name (schema or function), or undefined after reporting it at `path`. */
export function readName(raw: unknown, ctx: Ctx, path: PathSegment[]): string | undefined {
  if (typeof raw !== 'string') {
    if (raw === undefined) addIssue(ctx, 'required', [], { path });
    else addIssue(ctx, 'wrongType', ['a string', raw], { path });
    return undefined;
  }
  if (!NAME_PATTERN.test(raw)) {
    addIssue(ctx, 'nameFormat', [raw], { path });
    return undefined;
  }
  return raw;
}

/** An optional description (string or null), or false after reporting it at `path`. */
export function readDescription(raw: unknown, ctx: Ctx, path: PathSegment[]): string | null | false {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') addIssue(ctx, 'wrongType', ['a string', raw], { path });
  else if (raw.length > limits.maxTextChars) addIssue(ctx, 'stringTooLong', [limits.maxTextChars, raw.length], { path });
  else return raw;
  return false;
}

/** An optional boolean (null: false), or undefined after reporting it at `path`. */
export function readFlag(raw: unknown, ctx: Ctx, path: PathSegment[]): boolean | undefined {
  if (raw === undefined || raw === null) return false;
  if (typeof raw === 'boolean') return raw;
  addIssue(ctx, 'wrongType', ['a boolean (true or false)', raw], { path });
  return undefined;
}

/** A JSON schema within the enforced subset, or undefined after reporting its first problem at `path`. */
export function readSchema(raw: unknown, ctx: Ctx, path: PathSegment[]): JsonSchema | undefined {
  if (raw === undefined) {
    addIssue(ctx, 'required', [], { path });
    return undefined;
  }
  const found = checkSchemaSubset(raw);
  if (found) {
    (addIssue as unknown as (c: Ctx, k: string, a: readonly unknown[], o: { path: PathSegment[] }) => void)(ctx, found.kind, found.args, { path: [...path, ...found.path] });
    return undefined;
  }
  return raw as JsonSchema;
}

export const responseFormatSchema = z.custom<unknown>().optional().transform((raw: unknown, ctx): ResponseFormat => {
  if (raw === undefined || raw === null) return { type: 'text' };
  if (!isPlainObject(raw)) {
    addIssue(ctx, 'wrongType', ['an object', raw]);
    return z.NEVER;
  }
  const type = raw['type'];
  if (type === 'text' || type === 'json_object') return { type };
  if (type !== 'json_schema') {
    if (type === undefined) addIssue(ctx, 'required', [], { path: ['type'] });
    else addIssue(ctx, 'oneOf', [responseFormatTypes, type], { path: ['type'] });
    return z.NEVER;
  }
  const spec = raw['json_schema'];
  if (!isPlainObject(spec)) {
    if (spec === undefined) addIssue(ctx, 'required', [], { path: ['json_schema'] });
    else addIssue(ctx, 'wrongType', ['an object', spec], { path: ['json_schema'] });
    return z.NEVER;
  }
  const at = (k: string) => ['json_schema', k];
  const name = readName(spec['name'], ctx, at('name'));
  const description = readDescription(spec['description'], ctx, at('description'));
  const strict = readFlag(spec['strict'], ctx, at('strict'));
  const schema = readSchema(spec['schema'], ctx, at('schema'));
  if (name === undefined || description === false || strict === undefined || schema === undefined) return z.NEVER;
  const json_schema: JsonSchemaFormat = { name, schema, strict };
  if (description !== null) json_schema.description = description;
  return { type: 'json_schema', json_schema };
});
