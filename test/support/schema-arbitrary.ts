/**
 * Random response schemas from the enforced JSON-schema subset (fast-check), bounded the way real
 * apps bound them so that a random-weight model finishes: short strings (maxLength ≤ 12, mostly
 * ≤ 4), enums and consts, integer ranges, booleans, null through type lists, objects with required
 * and optional properties, arrays with minItems/maxItems, prefixItems, anyOf, $ref to $defs, the
 * formats and patterns that compile fast; and issue 57's: one-sided and non-integer bounds, zod's
 * ±2^53 integers and `.positive()`, integer and decimal multiples, formats beside zod's patterns, allOf,
 * discriminated oneOf, a recursive $ref, and annotation noise. (Every string bound is a copy per character in the
 * grammar: compiling costs ≈ 50 ms per unit of maxLength on a 150,000-token vocabulary.)
 */
import fc from 'fast-check';
import type { JsonSchema } from '../../src/contract/index.ts';

const WORDS = ['red', 'green', 'blue', 'yes', 'no', 'alpha', 'beta', 'cat', 'dog', 'x', 'ok', 'done', 'Paris', 'é'];
const NAMES = ['id', 'name', 'kind', 'age', 'tags', 'ok', 'when', 'score', 'meta', 'items', 'note', 'level'];
const PATTERNS = ['^[a-z]{1,4}$', '^[0-9]{2,3}$', '^[A-Z][a-z]{0,3}$', '^(?:yes|no|maybe)$', '^[a-f0-9]{4}$', '^.{1,3}$'];
const FORMATS = ['date', 'time', 'date-time', 'uuid', 'ipv4'];

const word = fc.constantFrom(...WORDS);

const integerRange = fc
  .tuple(fc.integer({ min: -20, max: 100 }), fc.integer({ min: 0, max: 40 }), fc.boolean(), fc.boolean())
  .map(([lo, width, exclusive, nullable]): JsonSchema => {
    const type = nullable ? ['integer', 'null'] : 'integer';
    return exclusive ? { type, exclusiveMinimum: lo - 1, exclusiveMaximum: lo + width + 1 } : { type, minimum: lo, maximum: lo + width };
  });

const shortString = fc
  .tuple(fc.integer({ min: 0, max: 1 }), fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 1, max: 4 }) }, { weight: 1, arbitrary: fc.integer({ min: 5, max: 12 }) }), fc.boolean())
  .map(([min, max, nullable]): JsonSchema => ({ type: nullable ? ['string', 'null'] : 'string', ...(min > 0 ? { minLength: min } : {}), maxLength: max }));

/** Issue 57's everyday constraints: one-sided and non-integer bounds, formats beside zod's patterns. */
const ZOD_EMAIL = "^(?:[A-Za-z0-9_'+\\-]+\\.)*[A-Za-z0-9_'+\\-]*[A-Za-z0-9_+-]@(?:[A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$";
const ZOD_UUID = '^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$';
const bounded: fc.Arbitrary<JsonSchema> = fc.oneof(
  fc.integer({ min: -50, max: 50 }).map((lo): JsonSchema => ({ type: 'integer', minimum: lo })),
  fc.integer({ min: -50, max: 50 }).map((hi): JsonSchema => ({ type: 'integer', exclusiveMaximum: hi })),
  fc.constant<JsonSchema>({ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }),
  fc.constant<JsonSchema>({ type: 'integer', minimum: 1, maximum: 9007199254740991 }),
  fc.constant<JsonSchema>({ type: 'number', exclusiveMinimum: 0 }),
  fc.tuple(fc.integer({ min: -20000, max: 20000 }).map((x) => x / 1000), fc.integer({ min: 0, max: 5000 }).map((x) => x / 1000), fc.boolean()).map(([lo, w, ex]): JsonSchema => (ex ? { type: 'number', exclusiveMinimum: lo, exclusiveMaximum: lo + w + 0.5 } : { type: 'number', minimum: lo, maximum: lo + w })),
  fc.integer({ min: 2, max: 10 }).map((k): JsonSchema => ({ type: 'integer', multipleOf: k, minimum: 0, maximum: 100 })),
  fc.constantFrom(0.01, 0.25, 1.5).map((d): JsonSchema => ({ type: 'number', multipleOf: d, minimum: -50, maximum: 50 })),
  fc.constantFrom<JsonSchema>({ type: 'string', format: 'email', pattern: ZOD_EMAIL }, { type: 'string', format: 'uuid', pattern: ZOD_UUID }, { type: 'string', format: 'date', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
);

const leaf: fc.Arbitrary<JsonSchema> = fc.oneof(
  bounded,
  fc.constant<JsonSchema>({ type: 'boolean' }),
  fc.constant<JsonSchema>({ type: 'null' }),
  fc.uniqueArray(word, { minLength: 1, maxLength: 4 }).map((e): JsonSchema => ({ enum: e })),
  fc.uniqueArray(word, { minLength: 1, maxLength: 3 }).map((e): JsonSchema => ({ type: 'string', enum: e })),
  fc.oneof(word, fc.integer({ min: -5, max: 5 }), fc.boolean()).map((c): JsonSchema => ({ const: c })),
  integerRange,
  shortString,
  fc.constantFrom(...FORMATS).map((format): JsonSchema => ({ type: 'string', format })),
  fc.constantFrom(...PATTERNS).map((pattern): JsonSchema => ({ type: 'string', pattern })),
);

/** Schemas nested at most `depth` levels below the leaves. */
function schemaAt(depth: number): fc.Arbitrary<JsonSchema> {
  if (depth === 0) return leaf;
  const inner = schemaAt(depth - 1);
  const object = fc
    .tuple(fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }), fc.array(inner, { minLength: 4, maxLength: 4 }), fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), fc.boolean())
    .map(([names, schemas, required, closed]): JsonSchema => {
      const properties = Object.fromEntries(names.map((n, i) => [n, schemas[i]!]));
      const req = names.filter((_, i) => required[i]);
      return { type: 'object', properties, ...(req.length > 0 ? { required: req } : {}), ...(closed ? { additionalProperties: false } : {}) };
    });
  const array = fc
    .tuple(inner, fc.integer({ min: 0, max: 1 }), fc.integer({ min: 1, max: 3 }))
    .map(([items, min, max]): JsonSchema => ({ type: 'array', items, ...(min > 0 ? { minItems: min } : {}), maxItems: Math.max(min, max) }));
  const tuple = fc.tuple(inner, inner).map(([a, b]): JsonSchema => ({ type: 'array', prefixItems: [a, b], items: false }));
  const anyOf = fc.tuple(inner, inner).map(([a, b]): JsonSchema => ({ anyOf: [a, b] }));
  const allOf = fc.tuple(fc.integer({ min: 1, max: 4 }), fc.boolean()).map(([n, typed]): JsonSchema => ({ allOf: [{ type: 'string' }, { maxLength: n }, ...(typed ? [{ pattern: '^[a-z]*$' }] : [])] }));
  const tagged = fc.tuple(inner, inner).map(([a, b]): JsonSchema => ({
    oneOf: [
      { type: 'object', properties: { kind: { const: 'a' }, x: a }, required: ['kind', 'x'], additionalProperties: false },
      { type: 'object', properties: { kind: { const: 'b' }, y: b }, required: ['kind'], additionalProperties: false },
    ],
  }));
  // Annotations and unknown keywords: ignored (issue 57), never refused.
  const noisy = inner.map((x): JsonSchema => ({ title: 'T', description: 'd', 'x-vendor': { a: 1 }, decription: 'typo', $comment: 'c', ...x }));
  return fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 3, arbitrary: object }, { weight: 2, arbitrary: array }, { weight: 1, arbitrary: tuple }, { weight: 1, arbitrary: anyOf }, { weight: 1, arbitrary: allOf }, { weight: 1, arbitrary: tagged }, { weight: 1, arbitrary: noisy });
}

/** The drafts a schema may declare with `$schema` (none: 2020-12, the default). */
export const DRAFTS = {
  'draft-04': 'http://json-schema.org/draft-04/schema#',
  'draft-06': 'http://json-schema.org/draft-06/schema#',
  'draft-07': 'http://json-schema.org/draft-07/schema#',
  '2019-09': 'https://json-schema.org/draft/2019-09/schema',
  '2020-12': 'https://json-schema.org/draft/2020-12/schema',
} as const;
export type Draft = keyof typeof DRAFTS;

/**
 * `schema` (written in 2020-12) as `draft` writes the same constraints, with its `$schema`:
 * `prefixItems` becomes an `items` array (and `items: false` `additionalItems: false`) before
 * 2020-12; `$defs` becomes `definitions` before 2019-09; in draft 4, `const` becomes a one-value
 * `enum` and an exclusive bound the boolean form beside `minimum`/`maximum`.
 */
export function inDraft(schema: JsonSchema, draft: Draft): JsonSchema {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v !== 'object' || v === null) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = k === 'properties' || k === '$defs' ? Object.fromEntries(Object.entries(x as object).map(([n, s]) => [n, walk(s)])) : walk(x);
    if (draft !== '2020-12' && Array.isArray(out['prefixItems'])) {
      const items = out['items'];
      out['items'] = out['prefixItems'];
      delete out['prefixItems'];
      if (items !== undefined) out['additionalItems'] = items;
    }
    if (draft === 'draft-04' || draft === 'draft-06' || draft === 'draft-07') {
      if (out['$defs'] !== undefined) (out['definitions'] = out['$defs']), delete out['$defs'];
      if (typeof out['$ref'] === 'string') out['$ref'] = out['$ref'].replace('#/$defs/', '#/definitions/');
    }
    if (draft === 'draft-04') {
      if ('const' in out) (out['enum'] = [out['const']]), delete out['const'];
      for (const [ex, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
        if (typeof out[ex] === 'number') (out[bound] = out[ex]), (out[ex] = true);
      }
    }
    return out;
  };
  return { $schema: DRAFTS[draft], ...(walk(schema) as JsonSchema) };
}

/** A root schema: an object of up to 4 properties (nested 1 level, sometimes 2), sometimes with $defs referenced. */
export const responseSchema: fc.Arbitrary<JsonSchema> = fc
  .tuple(
    fc.uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 4 }),
    fc.array(fc.oneof({ weight: 4, arbitrary: schemaAt(1) }, { weight: 1, arbitrary: schemaAt(2) }), { minLength: 4, maxLength: 4 }),
    fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
    fc.option(leaf, { nil: null, freq: 4 }),
  )
  .map(([names, schemas, required, def]): JsonSchema => {
    const properties: Record<string, JsonSchema> = Object.fromEntries(names.map((n, i) => [n, schemas[i]!]));
    if (def) properties['ref'] = { $ref: '#/$defs/Shared' };
    // A recursive definition: a chain of nodes, each with at most one child (recursion enforced by the grammar;
    // a node's expected children stay well under one, so random weights finish it within max_tokens).
    if (def && names.length % 2 === 0) properties['tree'] = { $ref: '#/$defs/Tree' };
    const req = names.filter((_, i) => required[i]);
    return {
      type: 'object',
      ...(def ? { $defs: { Shared: def, Tree: { type: 'object', properties: { v: { type: 'integer', minimum: 0, maximum: 9 }, kids: { type: 'array', items: { $ref: '#/$defs/Tree' }, maxItems: 1 } }, required: ['v'], additionalProperties: false } } } : {}),
      properties,
      ...(req.length > 0 ? { required: req } : {}),
      additionalProperties: false,
    };
  });
