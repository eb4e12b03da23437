/**
 * The JSONSchemaBench coverage survey's pieces that need no data set (scripts/structured/):
 * where a refusal's keyword is read from its path, a wrapped schema unwrapped, a verdict given.
 */
import { describe, expect, it } from 'vitest';
import { unwrap } from '../../scripts/structured/jsb-data.ts';
import { keywordAt, reasonShape, schemaVerdict } from '../../scripts/structured/schema-verdict.ts';

describe('keywordAt', () => {
  it('names the last keyword of the path, never a property name or an index', () => {
    expect(keywordAt(['properties', 'a', 'format'])).toBe('format');
    expect(keywordAt(['properties', 'format'])).toBe('properties');
    expect(keywordAt(['properties', 'a', 'items', 'oneOf', 2])).toBe('oneOf');
    expect(keywordAt(['anyOf', 1, 'properties', 'not', 'multipleOf'])).toBe('multipleOf');
    expect(keywordAt(['definitions', 'not', 'not'])).toBe('not');
    expect(keywordAt(['items', 0, 'minimum'])).toBe('minimum');
    expect(keywordAt(['required', 3])).toBe('required');
    expect(keywordAt([])).toBe('schema');
  });
});

describe('unwrap', () => {
  it('takes the schema out of a { schema, tests } file and leaves a schema alone', () => {
    expect(unwrap({ schema: { type: 'string' }, tests: [] })).toEqual({ type: 'string' });
    const schema = { type: 'object', properties: { schema: { type: 'string' } }, tests: [] };
    expect(unwrap(schema)).toBe(schema);
    expect(unwrap(true)).toBe(true);
  });
});

describe('schemaVerdict', () => {
  it('tells the contract, the compiler and acceptance apart', () => {
    expect(schemaVerdict({ type: 'object', properties: { a: { type: 'string' } } }).stage).toBe('accepted');
    const contract = schemaVerdict({ type: 'object', properties: { a: { not: { type: 'string' } } } });
    expect(contract).toMatchObject({ stage: 'contract', keyword: 'not' });
    const compiler = schemaVerdict({ oneOf: [{ type: 'string' }, { type: 'string', maxLength: 3 }] });
    expect(compiler).toMatchObject({ stage: 'compiler', keyword: 'oneOf' });
  });

  it('counts like refusals together', () => {
    expect(reasonShape('\'schema.a.multipleOf\': the value "0.01" is 3 times 7')).toBe('the value "…" is N times N');
  });
});
