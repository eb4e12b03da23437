import { describe, expect, it } from 'vitest';
import { checkBodyBounds, limits } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const nest = (levels: number, leaf: unknown, asArray: boolean): unknown => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = asArray ? [v] : { deeper: v };
  return v;
};

/** An independent reading of a body's depth: levels of objects and arrays on its deepest path (recursive, small bodies only). */
const depthOf = (v: unknown): number =>
  v === null || typeof v !== 'object' ? 0 : 1 + Math.max(0, ...Object.values(v as object).map(depthOf));

const decision = (state: unknown) => ({ model: 'jev', state, questions: { q: { type: 'noul', instructions: 'Is it?' } } });

describe('checkBodyBounds: the whole body, walked once without recursion', () => {
  it('passes a body of exactly maxBodyDepth levels, refuses one more, at any depth past it', () => {
    // the body is level 1, so the state holds maxBodyDepth - 1 levels
    const atBound = decision(nest(limits.maxBodyDepth - 1, 'leaf', true));
    expect(depthOf(atBound)).toBe(limits.maxBodyDepth);
    expect(() => checkBodyBounds(atBound)).not.toThrow();
    for (const levels of [limits.maxBodyDepth, 5_000, 1_000_000]) {
      for (const asArray of [true, false]) {
        const err = expectJevError(() => checkBodyBounds(decision(nest(levels, 'leaf', asArray))), 'invalid_request', 400, 'state');
        expect(err.message).toMatch(/nested too deeply/);
        expect(err.message).toContain(String(limits.maxBodyDepth));
      }
    }
  });

  it('names the field that holds the excess, not the path down to it', () => {
    const chat = { model: 'jev', messages: [{ role: 'user', content: 'hi' }, { role: 'user', content: nest(10_000, 'x', true) }] };
    expectJevError(() => checkBodyBounds(chat), 'invalid_request', 400, 'messages[1].content');
    expectJevError(() => checkBodyBounds({ ...decision('s'), metadata: nest(10_000, 1, false) }), 'invalid_request', 400, 'metadata');
    expectJevError(() => checkBodyBounds(nest(10_000, 1, true)), 'invalid_request', 400, null);
  });

  it('refuses a circular body as too deep, and a value that cannot be read where it sits, saying what it threw', () => {
    const state: Record<string, unknown> = { a: 1 };
    state['self'] = state;
    expectJevError(() => checkBodyBounds(decision(state)), 'invalid_request', 400, 'state');
    const throwing = Object.defineProperty({}, 'x', { enumerable: true, get: () => { throw new Error('boom'); } });
    const e = expectJevError(() => checkBodyBounds(decision({ list: [1, throwing] })), 'invalid_request', 400, 'state.list[1].x');
    expect(e.message).toBe("'state.list[1].x' cannot be read: reading it threw Error: boom; a request body holds only plain data (strings, numbers, booleans, null, arrays and plain objects).");
    // A proxy whose keys cannot be listed: at the top, the body itself; inside, its field.
    const keyless = new Proxy({}, { ownKeys: () => { throw new TypeError('no keys'); } });
    expect(expectJevError(() => checkBodyBounds(keyless), 'invalid_request', 400, null).message).toMatch(/^'body' cannot be read: reading it threw TypeError: no keys;/);
    expectJevError(() => checkBodyBounds({ ...decision('s'), metadata: keyless }), 'invalid_request', 400, 'metadata');
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    expectJevError(() => checkBodyBounds({ ...decision('s'), tags: proxy }), 'invalid_request', 400, 'tags');
  });

  it('refuses what no JSON body carries, where it sits', () => {
    expectJevError(() => checkBodyBounds(decision({ a: [1, () => 2] })), 'invalid_request', 400, 'state.a[1]');
    expectJevError(() => checkBodyBounds(decision({ b: Symbol('s') })), 'invalid_request', 400, 'state.b');
    expectJevError(() => checkBodyBounds({ ...decision('s'), n: 10n }), 'invalid_request', 400, 'n');
  });

  it('refuses a container past the value count before reading its members', () => {
    let read = 0;
    const wide = new Proxy(new Array(limits.maxBodyNodes + 1), { get: (t, k) => (k !== 'length' && typeof k === 'string' && /^\d+$/.test(k) && read++, Reflect.get(t, k)) });
    expectJevError(() => checkBodyBounds(decision(wide)), 'invalid_request', 400, 'state');
    expect(read).toBe(0);
  });

  it('refuses a string longer than any HTTP body', () => {
    const long = 'x'.repeat(limits.maxBodyBytes + 1);
    expectJevError(() => checkBodyBounds({ model: 'jev', messages: [{ role: 'user', content: long }] }), 'invalid_request', 400, 'messages[0].content');
  });

  it('passes every valid shape untouched: strings, numbers, null, wide and deep within bounds', () => {
    const body = decision({ list: Array.from({ length: 50_000 }, (_, i) => i), text: 'é\u0000\ud800', deep: nest(100, null, false) });
    const before = JSON.stringify(body);
    expect(() => checkBodyBounds(body)).not.toThrow();
    expect(JSON.stringify(body)).toBe(before);
  });
});
