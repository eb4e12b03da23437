/**
 * The JSON-schema subset a response schema (and a tool's `parameters`) may use: the keywords the
 * engine enforces exactly while the model writes (docs/structured-output.md). Any other
 * validation keyword is refused, never ignored: `checkSchemaSubset` returns the path of the first
 * keyword it cannot enforce, and the request is answered 400 `invalid_request` with `param`
 * pointing at that keyword. The walk recurses, as deep as the body goes, which body-bounds.ts has
 * already bounded (128 levels).
 *
 * Enforced: `type` (a name or a list of names), `enum`, `const`, `anyOf`, `properties`,
 * `required`, `additionalProperties`, `minProperties`, `maxProperties`, `items`, `prefixItems`,
 * `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern` (json-schema-pattern.ts), `format`
 * (`enforcedFormats`), `$ref` to the root's `$defs` / `definitions`, an integer range
 * (`minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`) with both ends and at most
 * `limits.maxIntegerRange` values, `uniqueItems: false`. Annotations are read and left alone.
 */
import { enforceablePattern } from './json-schema-pattern.ts';
import { limits } from './limits.ts';
import type { MessageArgs, MessageKind } from './messages.ts';
import { numberBoundsReason, refusedSchemaKeywords } from './messages.ts';
import type { PathSegment } from './param-path.ts';
import { isPlainObject } from './validation.ts';

/** A JSON schema object, as the client sent it. */
export type JsonSchema = Record<string, unknown>;

const { maxIntegerRange } = limits;

/**
 * The `format` values enforced: each is written as a pattern of our own, or (ipv6, duration,
 * uri-reference) left to xgrammar's own grammar, whose strings ajv-formats accepts.
 */
export const enforcedFormats = ['date', 'time', 'date-time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uri', 'uri-reference', 'uuid'] as const;
export type EnforcedFormat = (typeof enforcedFormats)[number];

export const schemaTypes = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'] as const;

/** Keywords that only describe: read, never enforced, never refused. */
export const schemaAnnotations = ['title', 'description', 'default', 'examples', '$schema', '$id', '$comment', 'deprecated', 'readOnly', 'writeOnly'] as const;

/** The first keyword of a schema that cannot be enforced: where it is (relative to the schema) and why. */
export interface SchemaProblem<K extends MessageKind = MessageKind> {
  path: PathSegment[];
  kind: K;
  args: MessageArgs<K>;
}

const ANNOTATIONS: ReadonlySet<string> = new Set(schemaAnnotations);
const TYPES: ReadonlySet<string> = new Set(schemaTypes);
const FORMATS: ReadonlySet<string> = new Set(enforcedFormats);
const BOUNDS = ['minimum', 'exclusiveMinimum', 'maximum', 'exclusiveMaximum'] as const;
/** Keywords that must stand alone in their schema (with annotations; `enum` and `const` also with `type`). */
const ALONE = ['$ref', 'anyOf', 'enum', 'const'] as const;

function problem<K extends MessageKind>(path: PathSegment[], kind: K, args: MessageArgs<K>): SchemaProblem<K> {
  return { path, kind, args };
}

/** The first keyword of `schema` that cannot be enforced, or null when the whole schema can be. */
export function checkSchemaSubset(schema: unknown): SchemaProblem | null {
  if (!isPlainObject(schema)) return problem([], 'wrongType', ['a JSON schema (an object)', schema]);
  return new SchemaWalker(schema).node(schema, [], true);
}

class SchemaWalker {
  constructor(private readonly root: JsonSchema) {}

  node(schema: unknown, path: PathSegment[], isRoot = false): SchemaProblem | null {
    if (!isPlainObject(schema)) return problem(path, 'wrongType', ['a JSON schema (an object)', schema]);
    const keys = Object.keys(schema);
    const validating = keys.filter((k) => !ANNOTATIONS.has(k) && k !== '$defs' && k !== 'definitions');
    for (const alone of ALONE) {
      if (!(alone in schema)) continue;
      const other = validating.find((k) => k !== alone && !((alone === 'enum' || alone === 'const') && k === 'type'));
      if (other !== undefined) return problem([...path, other], 'schemaNotAlone', [other, alone]);
    }
    for (const key of keys) {
      const found = this.keyword(schema, key, [...path, key], isRoot);
      if (found) return found;
    }
    return null;
  }

  keyword(schema: JsonSchema, key: string, at: PathSegment[], isRoot: boolean): SchemaProblem | null {
    const value = schema[key];
    if (ANNOTATIONS.has(key)) return null;
    switch (key) {
      case 'type':
        return checkType(value, at);
      case 'enum': {
        if (!Array.isArray(value) || value.length === 0) return problem(at, 'wrongType', ['a non-empty array', value]);
        for (let i = 0; i < value.length; i++) {
          if (!hasType(value[i], schema['type'])) return problem([...at, i], 'schemaValueNotOfType', [typeNames(schema['type'])]);
        }
        return null;
      }
      case 'const':
        return hasType(value, schema['type']) ? null : problem(at, 'schemaValueNotOfType', [typeNames(schema['type'])]);
      case 'anyOf': {
        if (!Array.isArray(value) || value.length === 0) return problem(at, 'wrongType', ['a non-empty array of schemas', value]);
        for (let i = 0; i < value.length; i++) {
          const found = this.node(value[i], [...at, i]);
          if (found) return found;
        }
        return null;
      }
      case 'properties': {
        if (!isPlainObject(value)) return problem(at, 'wrongType', ['an object of schemas', value]);
        for (const [name, sub] of Object.entries(value)) {
          // xgrammar 0.1.27 aborts on a name with '"' or a control character, and never matches one with '\'.
          if (/["\\\u0000-\u001f]/.test(name)) return problem([...at, name], 'schemaPropertyName', []);
          const found = this.node(sub, [...at, name]);
          if (found) return found;
        }
        return null;
      }
      case 'required': {
        if (!Array.isArray(value)) return problem(at, 'wrongType', ['an array of property names', value]);
        const names = isPlainObject(schema['properties']) ? schema['properties'] : {};
        const seen = new Set<string>();
        for (let i = 0; i < value.length; i++) {
          const name: unknown = value[i];
          if (typeof name !== 'string') return problem([...at, i], 'wrongType', ['a string', name]);
          if (seen.has(name)) return problem([...at, i], 'schemaDuplicate', [name]);
          seen.add(name);
          if (!Object.hasOwn(names, name)) return problem([...at, i], 'schemaRequiredNotAProperty', [name]);
        }
        return null;
      }
      case 'additionalProperties':
      case 'items':
        return typeof value === 'boolean' ? null : this.node(value, at);
      case 'prefixItems': {
        if (!Array.isArray(value)) return problem(at, 'wrongType', ['an array of schemas', value]);
        for (let i = 0; i < value.length; i++) {
          const found = this.node(value[i], [...at, i]);
          if (found) return found;
        }
        return null;
      }
      case 'minProperties':
      case 'minItems':
      case 'minLength':
      case 'maxProperties':
      case 'maxItems':
      case 'maxLength':
        return checkCount(schema, key, at);
      case 'pattern': {
        if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
        if ('format' in schema) return problem(at, 'schemaNotTogether', ['pattern', 'format']);
        const check = enforceablePattern(value);
        return check.ok ? null : problem(at, 'schemaPattern', [check.reason]);
      }
      case 'format':
        if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
        return FORMATS.has(value) ? null : problem(at, 'schemaFormat', [value, enforcedFormats]);
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        return checkBound(schema, key, at);
      case 'uniqueItems':
        if (typeof value !== 'boolean') return problem(at, 'wrongType', ['a boolean (true or false)', value]);
        return value ? problem(at, 'schemaKeywordRefused', ['uniqueItems', refusedSchemaKeywords.uniqueItems]) : null;
      case '$ref':
        return this.ref(value, at);
      case '$defs':
      case 'definitions': {
        if (!isRoot) return problem(at, 'schemaDefsNotAtRoot', [key]);
        if (!isPlainObject(value)) return problem(at, 'wrongType', ['an object of schemas', value]);
        for (const [name, sub] of Object.entries(value)) {
          const found = this.node(sub, [...at, name]);
          if (found) return found;
        }
        return null;
      }
      default:
        if (Object.hasOwn(refusedSchemaKeywords, key)) return problem(at, 'schemaKeywordRefused', [key, refusedSchemaKeywords[key as keyof typeof refusedSchemaKeywords]]);
        return problem(at, 'schemaKeywordUnknown', [key]);
    }
  }

  ref(value: unknown, at: PathSegment[]): SchemaProblem | null {
    if (typeof value !== 'string') return problem(at, 'wrongType', ['a string', value]);
    const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(value);
    if (!m) return problem(at, 'schemaRef', [value]);
    const defs = this.root[m[1]!];
    const name = m[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isPlainObject(defs) || !Object.hasOwn(defs, name)) return problem(at, 'schemaRefMissing', [value]);
    return null;
  }
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
  if (key === 'minLength' || key === 'maxLength') {
    // xgrammar 0.1.27 drops a string's length bounds next to a pattern or a format.
    for (const other of ['pattern', 'format']) if (other in schema) return problem(at, 'schemaNotTogether', [key, other]);
  }
  const [min, max] = COUNT_PAIRS[key]!;
  const lo = schema[min];
  const hi = schema[max];
  if (key === max && typeof lo === 'number' && typeof hi === 'number' && lo > hi) return problem(at, 'numberTooSmall', [lo, true, hi]);
  // Bounds no value can meet would leave the model without a token to write.
  const required = Array.isArray(schema['required']) ? schema['required'].length : 0;
  const properties = isPlainObject(schema['properties']) ? Object.keys(schema['properties']).length : 0;
  const prefix = Array.isArray(schema['prefixItems']) ? schema['prefixItems'].length : 0;
  if (key === 'maxProperties' && value < required) return problem(at, 'numberTooSmall', [required, true, value]);
  if (key === 'minProperties' && schema['additionalProperties'] === false && value > properties) return problem(at, 'numberTooBig', [properties, true, value]);
  if (key === 'minItems' && schema['items'] === false && value > prefix) return problem(at, 'numberTooBig', [prefix, true, value]);
  return null;
}

/** The integer range of a schema's bounds: both ends, each the tighter of its inclusive and exclusive forms. */
export function integerRange(schema: JsonSchema): { lo: number; hi: number } | null {
  const num = (k: string) => (typeof schema[k] === 'number' && Number.isFinite(schema[k]) ? (schema[k] as number) : null);
  const lows = [num('minimum') === null ? null : Math.ceil(num('minimum')!), num('exclusiveMinimum') === null ? null : Math.floor(num('exclusiveMinimum')!) + 1].filter((x) => x !== null);
  const highs = [num('maximum') === null ? null : Math.floor(num('maximum')!), num('exclusiveMaximum') === null ? null : Math.ceil(num('exclusiveMaximum')!) - 1].filter((x) => x !== null);
  if (lows.length === 0 || highs.length === 0) return null;
  return { lo: Math.max(...lows), hi: Math.min(...highs) };
}

function checkBound(schema: JsonSchema, key: string, at: PathSegment[]): SchemaProblem | null {
  const value = schema[key];
  if (typeof value !== 'number' || !Number.isFinite(value)) return problem(at, 'wrongType', ['a finite number', value]);
  const types = typeof schema['type'] === 'string' ? [schema['type']] : Array.isArray(schema['type']) ? (schema['type'] as unknown[]) : [];
  if (types.includes('number')) return problem(at, 'schemaKeywordRefused', [key, numberBoundsReason]);
  if (!types.includes('integer')) return problem(at, 'schemaBoundNeedsInteger', [key]);
  const range = integerRange(schema);
  if (range === null) return problem(at, 'schemaIntegerRange', ['it is enforced only with both ends given (minimum or exclusiveMinimum, and maximum or exclusiveMaximum)']);
  // Report the range once, at its last bound.
  if (key !== BOUNDS.filter((b) => b in schema).at(-1)) return null;
  const count = range.hi - range.lo + 1;
  if (count < 1) return problem(at, 'schemaIntegerRange', [`it holds no integer (${range.lo} to ${range.hi})`]);
  if (count > maxIntegerRange) return problem(at, 'schemaIntegerRange', [`it holds ${count} integers, at most ${maxIntegerRange} are enforced`]);
  return null;
}

/** Whether a JSON value has one of the schema's types (any value when the schema names none). */
function hasType(value: unknown, type: unknown): boolean {
  if (type === undefined) return true;
  const types = typeof type === 'string' ? [type] : Array.isArray(type) ? type : [];
  return types.some((t) => {
    switch (t) {
      case 'null': return value === null;
      case 'boolean': return typeof value === 'boolean';
      case 'string': return typeof value === 'string';
      case 'integer': return typeof value === 'number' && Number.isInteger(value);
      case 'number': return typeof value === 'number';
      case 'array': return Array.isArray(value);
      case 'object': return isPlainObject(value);
      default: return false;
    }
  });
}

function typeNames(type: unknown): string {
  return typeof type === 'string' ? type : Array.isArray(type) ? type.join(' or ') : 'any';
}
