import { describe, expect, it } from 'vitest';
import { limits, parseDecisionRequest, renderState } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const questions = { q: { type: 'noul', instructions: 'i' } };
const stateOf = (state: unknown) => parseDecisionRequest({ model: 'jev', state, questions }).state;

function nest(levels: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

describe('state', () => {
  it('a string is the text itself', () => {
    expect(stateOf('Hello,\n world ')).toBe('Hello,\n world ');
    expect(renderState('x')).toBe('x');
  });

  it('AI SDK text content parts are their texts joined with \\n', () => {
    expect(stateOf([{ type: 'text', text: 'first' }, { type: 'text', text: 'second', providerOptions: { a: 1 } }])).toBe('first\nsecond');
    expect(stateOf([{ type: 'text', text: 'only' }])).toBe('only');
  });

  it('any other object or array is sorted JSON with 2-space indentation', () => {
    expect(stateOf({ b: 1, a: { d: [2, { z: true, y: null }], c: 'x' } })).toBe(
      '{\n  "a": {\n    "c": "x",\n    "d": [\n      2,\n      {\n        "y": null,\n        "z": true\n      }\n    ]\n  },\n  "b": 1\n}',
    );
    expect(stateOf(['a', 1])).toBe('[\n  "a",\n  1\n]');
    expect(stateOf([{ type: 'image', image: 'data' }])).toBe('[\n  {\n    "image": "data",\n    "type": "image"\n  }\n]');
  });

  it('renders objects with keys in any order identically', () => {
    const one = { user: { name: 'Ann', age: 30 }, message: 'hi', tags: ['x', 'y'] };
    const two = { tags: ['x', 'y'], message: 'hi', user: { age: 30, name: 'Ann' } };
    expect(stateOf(one)).toBe(stateOf(two));
    expect(stateOf(one)).toBe(JSON.stringify({ message: 'hi', tags: ['x', 'y'], user: { age: 30, name: 'Ann' } }, null, 2));
  });

  it('keeps a __proto__ key of a JSON state as data, without pollution', () => {
    const state = JSON.parse('{"__proto__":{"polluted":1},"b":2}') as unknown;
    expect(stateOf(state)).toBe('{\n  "__proto__": {\n    "polluted": 1\n  },\n  "b": 2\n}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('leaves out undefined members as JSON does', () => {
    expect(stateOf({ a: 1, b: undefined })).toBe('{\n  "a": 1\n}');
    expect(stateOf([1, undefined])).toBe('[\n  1,\n  null\n]');
  });

  it('must not be empty or blank', () => {
    for (const state of ['', '   \n', [], {}, [{ type: 'text', text: '' }]]) {
      expectJevError(() => stateOf(state), 'invalid_request', 400, 'state');
    }
  });

  it('is required and of a JSON kind', () => {
    expectJevError(() => parseDecisionRequest({ model: 'jev', questions }), 'invalid_request', 400, 'state');
    for (const state of [5, true, null]) expectJevError(() => stateOf(state), 'invalid_request', 400, 'state');
    // An object of a class (a structured clone carries Maps and Dates to the worker) is named by its class, a plain one is not.
    for (const [state, got] of [[new Map([['a', 1]]), 'a Map'], [new Date(0), 'a Date'], [new Int8Array(2), 'an Int8Array']] as const) {
      expect(expectJevError(() => stateOf(state), 'invalid_request', 400, 'state').message).toMatch(new RegExp(`, got ${got}\\.$`));
    }
    expect(expectJevError(() => stateOf({ d: new Date(0) }), 'invalid_request', 400, 'state.d').message).toContain('got a Date');
  });

  it('refuses values that are not JSON, naming where they sit', () => {
    expectJevError(() => stateOf({ a: NaN }), 'invalid_request', 400, 'state.a');
    expectJevError(() => stateOf({ a: [1, Infinity] }), 'invalid_request', 400, 'state.a[1]');
    expectJevError(() => stateOf({ f: () => 1 }), 'invalid_request', 400, 'state.f');
    expectJevError(() => stateOf({ d: new Date(0) }), 'invalid_request', 400, 'state.d');
    expectJevError(() => stateOf({ n: 1n }), 'invalid_request', 400, 'state.n');
    expectJevError(() => renderState({ 'a b': NaN }), 'invalid_request', 400, 'state["a b"]');
  });

  it('allows maxDepth levels and refuses 100 without overflowing the stack', () => {
    expect(stateOf(nest(limits.maxDepth))).toContain('"leaf"');
    expectJevError(() => stateOf(nest(limits.maxDepth + 1)), 'invalid_request', 400, 'state');
    const err = expectJevError(() => stateOf(nest(100)), 'invalid_request', 400, 'state');
    expect(err.message).toMatch(/nested too deeply/);
    expectJevError(() => stateOf(nest(100_000)), 'invalid_request', 400, 'state');
  });

  it('refuses a circular state as too deep', () => {
    const a: Record<string, unknown> = { x: 1 };
    a['self'] = a;
    expectJevError(() => stateOf(a), 'invalid_request', 400, 'state');
  });

  it('refuses a state longer than maxStateChars, with a short message', () => {
    expect(stateOf('x'.repeat(limits.maxStateChars))).toHaveLength(limits.maxStateChars);
    const err = expectJevError(() => stateOf('x'.repeat(limits.maxStateChars + 1)), 'invalid_request', 400, 'state');
    expect(err.message.length).toBeLessThan(200);
    expectJevError(() => stateOf({ big: 'x'.repeat(limits.maxStateChars) }), 'invalid_request', 400, 'state');
  });
});
