/**
 * response_format in the chat request: OpenAI's three shapes normalized exactly, and the
 * JSON-schema subset the engine enforces: every keyword it cannot enforce is a 400 whose `param`
 * points at that keyword (json-schema-subset.ts, docs/structured-output.md).
 */
import { describe, expect, it } from 'vitest';
import { checkSchemaSubset, enforcedFormats, parseChatRequest } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const base = { model: 'jev', messages: [{ role: 'user', content: 'Hi' }] };
const withFormat = (response_format: unknown) => parseChatRequest({ ...base, response_format });
const withSchema = (schema: unknown) => withFormat({ type: 'json_schema', json_schema: { name: 'out', schema } });
const SCHEMA = 'response_format.json_schema.schema';
const refusedAt = (schema: unknown, param: string, message?: RegExp) => {
  const err = expectJevError(() => withSchema(schema), 'invalid_request', 400, param);
  if (message) expect(err.message).toMatch(message);
  return err;
};

describe('response_format', () => {
  it('defaults to text; text, json_object and json_schema are normalized exactly', () => {
    expect(parseChatRequest(base).response_format).toEqual({ type: 'text' });
    expect(withFormat(null).response_format).toEqual({ type: 'text' });
    expect(withFormat({ type: 'text' }).response_format).toEqual({ type: 'text' });
    expect(withFormat({ type: 'json_object' }).response_format).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: { a: { type: 'integer', minimum: 0, maximum: 9 } }, required: ['a'], additionalProperties: false };
    expect(withFormat({ type: 'json_schema', json_schema: { name: 'digit-1_A', description: 'One digit.', schema, strict: true } }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'digit-1_A', description: 'One digit.', schema, strict: true },
    });
    expect(withFormat({ type: 'json_schema', json_schema: { name: 'x', schema: {}, strict: null, description: null } }).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'x', schema: {}, strict: false },
    });
  });

  it('refuses a malformed response_format naming the field', () => {
    expectJevError(() => withFormat('json'), 'invalid_request', 400, 'response_format');
    expectJevError(() => withFormat({}), 'invalid_request', 400, 'response_format.type');
    const err = expectJevError(() => withFormat({ type: 'json' }), 'invalid_request', 400, 'response_format.type');
    expect(err.message).toMatch(/"text", "json_object", "json_schema"/);
    expectJevError(() => withFormat({ type: 'json_schema' }), 'invalid_request', 400, 'response_format.json_schema');
    expectJevError(() => withFormat({ type: 'json_schema', json_schema: { schema: {} } }), 'invalid_request', 400, 'response_format.json_schema.name');
    for (const name of ['', 'a b', 'é', 'x'.repeat(65), 'a.b']) {
      expectJevError(() => withFormat({ type: 'json_schema', json_schema: { name, schema: {} } }), 'invalid_request', 400, 'response_format.json_schema.name');
    }
    expectJevError(() => withFormat({ type: 'json_schema', json_schema: { name: 'x' } }), 'invalid_request', 400, SCHEMA);
    expectJevError(() => withFormat({ type: 'json_schema', json_schema: { name: 'x', schema: 'object' } }), 'invalid_request', 400, SCHEMA);
    expectJevError(() => withFormat({ type: 'json_schema', json_schema: { name: 'x', schema: {}, strict: 'yes' } }), 'invalid_request', 400, 'response_format.json_schema.strict');
    expectJevError(() => withFormat({ type: 'json_schema', json_schema: { name: 'x', schema: {}, description: 3 } }), 'invalid_request', 400, 'response_format.json_schema.description');
  });
});

describe('the enforced JSON-schema subset', () => {
  it('accepts every enforced keyword, annotations and references', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'urn:x',
      title: 'T',
      description: 'D',
      $comment: 'c',
      type: 'object',
      $defs: { Tag: { type: 'string', minLength: 1, maxLength: 12 } },
      definitions: { N: { type: ['integer', 'null'], minimum: -5, exclusiveMaximum: 6 } },
      properties: {
        name: { type: 'string', maxLength: 20, default: 'x', examples: ['y'], deprecated: false, readOnly: true, writeOnly: false },
        zip: { type: 'string', pattern: '^[0-9]{5}$' },
        when: { type: 'string', format: 'date-time' },
        kind: { enum: ['a', 'b', 1, null] },
        fixed: { const: { a: [1] } },
        typed: { type: 'string', enum: ['x', 'y'] },
        either: { anyOf: [{ type: 'string' }, { type: 'boolean' }] },
        tags: { type: 'array', items: { $ref: '#/$defs/Tag' }, minItems: 1, maxItems: 3, uniqueItems: false },
        pair: { type: 'array', prefixItems: [{ type: 'integer', minimum: 0, maximum: 1 }, { type: 'string' }], items: false },
        n: { $ref: '#/definitions/N' },
        map: { type: 'object', additionalProperties: { type: 'number' }, minProperties: 0, maxProperties: 4 },
        tree: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/Tag' } } }, additionalProperties: true },
        'é ü': { type: 'boolean' },
      },
      required: ['name', 'kind'],
      additionalProperties: false,
    };
    expect(checkSchemaSubset(schema)).toBeNull();
    expect(withSchema(schema).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'out', schema, strict: false } });
    for (const format of enforcedFormats) expect(checkSchemaSubset({ type: 'string', format })).toBeNull();
    expect(checkSchemaSubset({})).toBeNull();
    expect(checkSchemaSubset({ type: 'integer', minimum: 1, maximum: 1_000_000 })).toBeNull();
    expect(checkSchemaSubset({ type: 'integer', exclusiveMinimum: 0.5, maximum: 3.7 })).toBeNull();
  });

  it('ignores annotations and unknown keywords, and takes what the grammar compiler decides (docs/structured-output.md)', () => {
    // Issue 57: these were refused before; JSON Schema reads unknown keywords as annotations, and
    // the compiler (engine/grammar/json-schema/) enforces the rest or refuses it at the keyword.
    const accepted: unknown[] = [
      { type: 'object', id: 'x', self: {}, readonly: true, name: 'n', copyright: 'c', 'x-kubernetes-preserve-unknown-fields': true, decription: 'typo', properties: { a: { type: 'string', _format: 'd' } } },
      { type: 'string', nullable: true },
      { type: 'string', maxLenght: 3 },
      { type: 'string', format: 'iri' },
      { type: 'string', format: 'json-pointer' },
      { type: 'integer', minimum: 0 },
      { type: 'number', exclusiveMinimum: 0, maximum: 1.5 },
      { type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 },
      { type: 'integer', multipleOf: 5 },
      { type: 'number', multipleOf: 0.01 },
      { minimum: 0, maximum: 1 },
      { allOf: [{ type: 'string' }, { maxLength: 3 }] },
      { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      { type: 'object', dependentRequired: { a: ['b'] }, dependentSchemas: {}, dependencies: { c: ['d'], e: { required: ['f'] } } },
      { type: 'object', patternProperties: { '^x': {} }, propertyNames: { maxLength: 3 } },
      { type: 'string', format: 'email', pattern: '^a', minLength: 3 },
      { type: 'object', properties: { a: {} }, required: ['a', 'b'] },
      { type: 'object', properties: { 'a"b': {}, a: true } },
      { $defs: { A: { type: 'object', properties: { b: {} } } }, $ref: '#/$defs/A/properties/b' },
      { type: 'object', properties: { a: { $defs: { B: {} }, $ref: '#/properties/a/$defs/B', type: 'string' } } },
      { type: 'string', anyOf: [{ maxLength: 3 }] },
      { enum: ['a', 1], type: 'string', maxLength: 3 },
      { type: 'array', uniqueItems: true, items: { enum: [1, 2] } },
      { if: { type: 'string' }, then: { maxLength: 3 }, else: { type: 'integer' } },
      { type: 'object', properties: { a: { not: {} }, b: { not: true }, c: { not: false } } },
      { type: 'object', oneOf: [{ required: ['a'], not: { required: ['b'], description: 'not both' } }, { required: ['b'] }] },
    ];
    for (const schema of accepted) expect(checkSchemaSubset(schema), JSON.stringify(schema)).toBeNull();
  });

  const refusals: [string, unknown, string, RegExp?][] = [
    ['a multipleOf of 0', { type: 'object', properties: { x: { type: 'number', multipleOf: 0 } } }, `${SCHEMA}.properties.x.multipleOf`, /above 0/],
    ['not', { not: { type: 'string' } }, `${SCHEMA}.not`],
    ['not of required names beside a constraint', { type: 'object', not: { required: ['a'], minProperties: 2 } }, `${SCHEMA}.not`, /"required" names alone/],
    ['contains', { type: 'array', contains: { const: 1 } }, `${SCHEMA}.contains`],
    ['minContains', { type: 'array', minContains: 1 }, `${SCHEMA}.minContains`],
    ['maxContains', { type: 'array', maxContains: 1 }, `${SCHEMA}.maxContains`],
    ['unevaluatedProperties', { type: 'object', unevaluatedProperties: false }, `${SCHEMA}.unevaluatedProperties`],
    ['unevaluatedItems', { type: 'array', unevaluatedItems: false }, `${SCHEMA}.unevaluatedItems`],
    ['$dynamicRef', { $dynamicRef: '#x' }, `${SCHEMA}.$dynamicRef`],
    ['an external $ref', { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } }, `${SCHEMA}.properties.a.$ref`, /external/],
    ['a $ref to nothing', { $ref: '#/$defs/Missing' }, `${SCHEMA}.$ref`, /names no schema/],
    ['an enum that is not a list', { enum: 'a' }, `${SCHEMA}.enum`],
    ['a format validators check and the engine cannot write', { type: 'string', format: 'regex' }, `${SCHEMA}.format`, /"date-time"/],
    ['url', { type: 'string', format: 'url' }, `${SCHEMA}.format`],
    ['a pattern with lookahead', { type: 'object', properties: { p: { type: 'string', pattern: '^(?=a)a$' } } }, `${SCHEMA}.properties.p.pattern`, /lookahead/],
    ['a pattern with \\p{}', { type: 'string', pattern: '\\p{L}+' }, `${SCHEMA}.pattern`, /Unicode property/],
    ['a pattern with \\b', { type: 'string', pattern: '\\bx' }, `${SCHEMA}.pattern`, /word boundar/],
    ['a pattern with a backreference', { type: 'string', pattern: '(a)\\1' }, `${SCHEMA}.pattern`, /backreference/],
    ['an invalid pattern', { type: 'string', pattern: '(' }, `${SCHEMA}.pattern`, /not a valid regular expression/],
    ['a patternProperties pattern with lookahead', { type: 'object', patternProperties: { '(?=a)': {} } }, `${SCHEMA}.patternProperties["(?=a)"]`, /lookahead/],
    ['a bad type name', { type: 'str' }, `${SCHEMA}.type`, /"string"/],
    ['a bad type in a list', { type: ['string', 'nul'] }, `${SCHEMA}.type[1]`],
    ['a negative maxLength', { type: 'string', maxLength: -1 }, `${SCHEMA}.maxLength`],
    ['minItems above maxItems', { type: 'array', minItems: 3, maxItems: 2 }, `${SCHEMA}.maxItems`],
    ['maxProperties below the required count', { type: 'object', properties: { a: {}, b: {} }, required: ['a', 'b'], maxProperties: 1 }, `${SCHEMA}.maxProperties`],
    ['a subschema that is neither an object nor a boolean', { type: 'object', properties: { a: 3 } }, `${SCHEMA}.properties.a`],
    ['deep in anyOf', { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', properties: { x: { type: 'string', format: 'uri-template' } } } }] }, `${SCHEMA}.anyOf[1].items.properties.x.format`],
    ['deep in $defs', { $defs: { A: { type: 'integer', not: { const: 3 } } }, $ref: '#/$defs/A' }, `${SCHEMA}.$defs.A.not`],
  ];
  for (const [what, schema, param, message] of refusals) {
    it(`refuses ${what} at ${param}`, () => {
      refusedAt(schema, param, message);
    });
  }

  it('refuses a schema that is not an object, at the schema', () => {
    for (const schema of [true, [], 'object', 3]) refusedAt(schema, SCHEMA);
  });
});
