/**
 * The first check of a response schema (and of a tool's `parameters`), before a request reaches
 * the engine (docs/structured-output.md). JSON Schema's rule: a keyword that constrains nothing
 * is an annotation, and an unknown keyword is ignored (`title`, `description`, `x-*`, `id`,
 * `nullable`, a typo such as `decription`, `_format`, an unknown `format` value: 2020-12's
 * format-annotation vocabulary). A keyword that constrains must be enforced exactly, or refused:
 * `checkSchemaSubset` returns the path of the first keyword it must refuse, and the request is
 * answered 400 `invalid_request` with `param` at that keyword.
 *
 * Checked here: each constraining keyword's shape (a count is a non-negative integer, a pattern a
 * valid regular expression of the enforced syntax, a reference points inside the schema…), and
 * the keywords never enforced (`not` but of `{}` or of `required` names, `contains`, `unevaluated*`, dynamic references,
 * the formats validators check but the engine cannot write). What needs
 * the whole schema (a `oneOf` whose branches must be disjoint, `uniqueItems` over a finite
 * domain, a `format` beside a `pattern`) is decided by the grammar compiler
 * (src/engine/grammar/json-schema/), which refuses the same way, at the keyword. The walk
 * recurses as deep as the body goes, which body-bounds.ts has already bounded (128 levels).
 */
import { patternSyntaxProblem } from './json-schema-pattern.ts';
import type { MessageArgs, MessageKind } from './messages.ts';
import type { PathSegment } from './param-path.ts';
import { isPlainObject } from './validation.ts';

/** A JSON schema object, as the client sent it. */
export type JsonSchema = Record<string, unknown>;

/** The string formats the engine writes (each a pattern of its own: engine/grammar/format-patterns.ts). */
export const stringFormats = ['date', 'time', 'date-time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'uuid', 'json-pointer', 'relative-json-pointer', 'byte', 'password', 'binary'] as const;
export type StringFormat = (typeof stringFormats)[number];
/** The number formats (ajv-formats'): int32 and int64 are bounds, float and double any number. */
export const numberFormats = ['int32', 'int64', 'float', 'double'] as const;
export const enforcedFormats = [...stringFormats, ...numberFormats] as const;
export type EnforcedFormat = (typeof enforcedFormats)[number];
/** Formats a validator (ajv-formats) checks that the engine cannot write exactly: refused. Any other name is an annotation. */
export const refusedFormats = ['iso-time', 'iso-date-time', 'uri-template', 'url', 'regex', 'json-pointer-uri-fragment'] as const;

export const schemaTypes = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;

/** Keywords that only describe (a few of them; any keyword unknown here is ignored alike). */
export const schemaAnnotations = ['title', 'description', 'default', 'examples', '$schema', '$id', 'id', '$comment', 'deprecated', 'readOnly', 'writeOnly', 'nullable'] as const;

/** Constraining keywords the engine never enforces, and why. */
export const unenforcedSchemaKeywords: Readonly<Record<string, string>> = {
  not: 'a negation is enforced only of {} (nothing is then allowed) or of "required" names alone; list what is allowed (enum, anyOf)',
  contains: '"some item must match" is not enforced; use prefixItems for a fixed position',
  minContains: '"some item must match" is not enforced',
  maxContains: '"some item must match" is not enforced',
  unevaluatedProperties: 'not enforced; use additionalProperties',
  unevaluatedItems: 'not enforced; use items',
  $dynamicRef: 'only references to a place in the same schema ("#/…") are enforced',
  $recursiveRef: 'only references to a place in the same schema ("#/…") are enforced',
};

/**
 * What a `not` enforced exactly negates: a schema every value meets (`{}`, `true`, annotations
 * only, `"required": []`: the negation allows nothing), one no value meets (`false`: it allows
 * everything), or names an object must all have (`{"required": [...]}`: the negation allows an
 * object lacking one of them, and nothing else: a non-object meets `required`); null for any other.
 */
export function negatableNot(value: unknown): { kind: 'nothing' } | { kind: 'anything' } | { kind: 'lacking'; names: string[] } | null {
  if (value === true) return { kind: 'nothing' };
  if (value === false) return { kind: 'anything' };
  if (!isPlainObject(value)) return null;
  const ANNOTATIONS: ReadonlySet<string> = new Set(schemaAnnotations);
  if (Object.keys(value).some((k) => k !== 'required' && !ANNOTATIONS.has(k))) return null;
  const names = value['required'];
  if (names === undefined) return { kind: 'nothing' };
  if (!Array.isArray(names) || !names.every((n): n is string => typeof n === 'string')) return null;
  return names.length === 0 ? { kind: 'nothing' } : { kind: 'lacking', names: [...new Set(names)] };
}

/** The first keyword of a schema that cannot be enforced: where it is (relative to the schema) and why. */
export interface SchemaProblem<K extends MessageKind = MessageKind> {
  path: PathSegment[];
  kind: K;
  args: MessageArgs<K>;
}

const TYPES: ReadonlySet<string> = new Set(schemaTypes);
const REFUSED_FORMATS: ReadonlySet<string> = new Set(refusedFormats);
const SCHEMA_VALUED = ['additionalProperties', 'additionalItems', 'propertyNames', 'if', 'then', 'else'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const COUNTS = ['minProperties', 'maxProperties', 'minItems', 'maxItems', 'minLength', 'maxLength'];
const BOUNDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];

function problem<K extends MessageKind>(path: PathSegment[], kind: K, args: MessageArgs<K>): SchemaProblem<K> {
  return { path, kind, args };
}
const refused = (path: PathSegment[], keyword: string, why: string) => problem(path, 'schemaKeywordRefused', [keyword, why]);

/** The first keyword of `schema` that cannot be enforced, or null when the whole schema can be. */
export function checkSchemaSubset(schema: unknown): SchemaProblem | null {
  if (!isPlainObject(schema)) return problem([], 'wrongType', ['a JSON schema (an object)', schema]);
  return new SchemaWalker(schema).node(schema, []);
}

class SchemaWalker {
  constructor(private readonly root: JsonSchema) {}

  node(schema: unknown, path: PathSegment[]): SchemaProblem | null {
    if (typeof schema === 'boolean') return null;
    if (!isPlainObject(schema)) return problem(path, 'wrongType', ['a JSON schema (an object or a boolean)', schema]);
    for (const key of Object.keys(schema)) {
      const found = this.keyword(schema, key, [...path, key]);
      if (found) return found;
    }
    return null;
  }

  keyword(schema: JsonSchema, key: string, at: PathSegment[]): SchemaProblem | null {
    const value = schema[key];
    if (key === 'not' && negatableNot(value)) return this.node(value, at);
    if (Object.hasOwn(unenforcedSchemaKeywords, key)) return refused(at, key, unenforcedSchemaKeywords[key]!);
    if (SCHEMA_VALUED.includes(key)) return this.node(value, at);
    if (SCHEMA_LISTS.includes(key)) {
      if (!Array.isArray(value) || (value.length === 0 && key !== 'prefixItems')) return problem(at, 'wrongType', ['a non-empty array of schemas', value]);
      return this.list(value, at);
    }
    if (SCHEMA_MAPS.includes(key)) {
      if (!isPlainObject(value)) return problem(at, 'wrongType', ['an object of schemas', value]);
      for (const [name, sub] of Object.entries(value)) {
        if (key === 'patternProperties') {
          const why = patternSyntaxProblem(name);
          if (why) return problem([...at, name], 'schemaPattern', [why]);
        }
        const found = this.node(sub, [...at, name]);
        if (found) return found;
      }
      return null;
    }
    if (COUNTS.includes(key)) return checkCount(schema, key, at);
    if (BOUNDS.includes(key)) {
      if (typeof value === 'boolean' && (key === 'exclusiveMinimum' || key === 'exclusiveMaximum')) return null; // draft 4
      return typeof value === 'number' && Number.isFinite(value) ? null : problem(at, 'wrongType', ['a finite number', value]);
    }
    switch (key) {
      case 'type':
        return checkType(value, at);
      case 'enum':
        return Array.isArray(value) ? null : problem(at, 'wrongType', ['an array', value]);
      case 'items':
        return Array.isArray(value) ? this.list(value, at) : this.node(value, at);
      case 'required':
        return checkNames(value, at, true);
      case 'dependentRequired':
      case 'dependencies': {
        if (!isPlainObject(value)) return problem(at, 'wrongType', ['an object', value]);
        for (const [name, v] of Object.entries(value)) {
          const found = Array.isArray(v) ? checkNames(v, [...at, name], false) : key === 'dependencies' ? this.node(v, [...at, name]) : problem([...at, name], 'wrongType', ['an array of property names', v]);
          if (found) return found;
        }
        return null;
      }
      case 'pattern': {
        if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
        const why = patternSyntaxProblem(value);
        return why ? problem(at, 'schemaPattern', [why]) : null;
      }
      case 'format':
        if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
        return REFUSED_FORMATS.has(value) ? problem(at, 'schemaFormat', [value, enforcedFormats]) : null;
      case 'multipleOf':
        // Whole and decimal multiples are enforced exactly (grammar/json-schema/numeric.ts); a modulus too large to track is refused by the compiler.
        return typeof value !== 'number' || !(value > 0) || !Number.isFinite(value) ? problem(at, 'wrongType', ['a number above 0', value]) : null;
      case 'uniqueItems':
        return typeof value === 'boolean' ? null : problem(at, 'wrongType', ['a boolean (true or false)', value]);
      case '$ref':
        return this.ref(value, at);
      default:
        return null; // an annotation, or a keyword JSON Schema does not know: ignored
    }
  }

  list(value: unknown[], at: PathSegment[]): SchemaProblem | null {
    for (let i = 0; i < value.length; i++) {
      const found = this.node(value[i], [...at, i]);
      if (found) return found;
    }
    return null;
  }

  ref(value: unknown, at: PathSegment[]): SchemaProblem | null {
    if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
    if (value !== '#' && !value.startsWith('#/')) return problem(at, 'schemaRef', [value]);
    const target = resolvePointer(this.root, value);
    if (target === undefined || (typeof target !== 'boolean' && !isPlainObject(target))) return problem(at, 'schemaRefMissing', [value]);
    return null;
  }
}

/** The value a local reference (`#`, `#/$defs/A`, `#/properties/a/items`) points at; undefined where none. */
export function resolvePointer(root: unknown, ref: string): unknown {
  let cur: unknown = root;
  if (ref === '#') return cur;
  for (const raw of ref.slice(2).split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(cur) && /^(0|[1-9][0-9]*)$/.test(seg)) cur = cur[Number(seg)];
    else if (isPlainObject(cur) && Object.hasOwn(cur, seg)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

function checkNames(value: unknown, at: PathSegment[], unique: boolean): SchemaProblem | null {
  if (!Array.isArray(value)) return problem(at, 'wrongType', ['an array of property names', value]);
  const seen = new Set<string>();
  for (let i = 0; i < value.length; i++) {
    const name: unknown = value[i];
    if (typeof name !== 'string') return problem([...at, i], 'wrongType', ['a string', name]);
    if (unique && seen.has(name)) return problem([...at, i], 'schemaDuplicate', [name]);
    seen.add(name);
  }
  return null;
}

function checkType(value: unknown, at: PathSegment[]): SchemaProblem | null {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0) return problem(at, 'wrongType', ['a type name or a non-empty array of type names', value]);
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const t: unknown = list[i];
    const where = typeof value === 'string' ? at : [...at, i];
    if (typeof t !== 'string' || !TYPES.has(t)) return problem(where, 'oneOf', [schemaTypes, t]);
    if (seen.has(t)) return problem(where, 'schemaDuplicate', [t]);
    seen.add(t);
  }
  return null;
}

const COUNT_PAIRS: Record<string, [string, string]> = {
  minProperties: ['minProperties', 'maxProperties'],
  maxProperties: ['minProperties', 'maxProperties'],
  minItems: ['minItems', 'maxItems'],
  maxItems: ['minItems', 'maxItems'],
  minLength: ['minLength', 'maxLength'],
  maxLength: ['minLength', 'maxLength'],
};

function checkCount(schema: JsonSchema, key: string, at: PathSegment[]): SchemaProblem | null {
  const value = schema[key];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) return problem(at, 'wrongType', ['a non-negative integer', value]);
  const [min, max] = COUNT_PAIRS[key]!;
  const lo = schema[min];
  const hi = schema[max];
  if (key === max && typeof lo === 'number' && typeof hi === 'number' && lo > hi) return problem(at, 'numberTooSmall', [lo, true, hi]);
  // Bounds no value can meet would leave the model without a token to write.
  const required = Array.isArray(schema['required']) ? new Set(schema['required']).size : 0;
  if (key === 'maxProperties' && value < required) return problem(at, 'numberTooSmall', [required, true, value]);
  return null;
}
