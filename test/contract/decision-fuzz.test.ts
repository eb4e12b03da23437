// Property test: thousands of malformed decision bodies, made by mutating a valid one, either
// parse or fail with a 4xx JevError whose param is a path into the body; never anything else.
import { describe, expect, it } from 'vitest';
import { JevError, formatParam, parseDecisionRequest, questionTypes, valueAt } from '../../src/contract/index.ts';
import type { PathSegment } from '../../src/contract/index.ts';
import { rng } from './helpers.ts';

const validBody = {
  model: 'jev',
  state: [{ type: 'text', text: 'Ticket: my invoice is wrong.' }],
  questions: {
    angry: { type: 'noul', instructions: 'Is the customer angry?', criteria: { true: 'angry', false: 'calm' } },
    team: { type: 'choice', instructions: 'Route it.', criteria: { billing: 'Money', tech: null, 'other team': 'Anything else' } },
    urgency: { type: 'score', instructions: 'How urgent?', criteria: ['none', 'low', 'medium', 'high'] },
  },
  calibrate: false,
};

function nest(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

const weird: readonly unknown[] = [
  null, undefined, 0, -1, 1.5, NaN, Infinity, -Infinity, '', ' ', 'x', 'noul', 'choice', 'score', 'jev', true, false,
  [], [1], ['a', 'b'], ['a'], {}, { a: 1 }, { type: 'text', text: 't' }, [{ type: 'text', text: '' }], { true: 'y' },
  JSON.parse('{"__proto__":{"polluted":true}}'), JSON.parse('{"constructor":{"prototype":{"polluted":true}}}'),
  nest(70), 'x'.repeat(1_000_001), Array.from({ length: 300 }, (_, i) => `g${i}`),
  Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, null])),
  10n, Symbol('s'), () => 1, new Date(0), new Map([['a', 1]]), Object.create(null) as unknown,
];
const weirdKeys = ['__proto__', 'constructor', 'prototype', '', 'messages', 'true', 'false', 'maybe', 'k'.repeat(2000), 'toString', '0'];

function allPaths(v: unknown, path: PathSegment[] = [], out: PathSegment[][] = []): PathSegment[][] {
  if (path.length > 0) out.push(path);
  if (Array.isArray(v)) v.forEach((x, i) => allPaths(x, [...path, i], out));
  else if (typeof v === 'object' && v !== null) for (const k of Object.keys(v)) allPaths((v as Record<string, unknown>)[k], [...path, k], out);
  return out;
}

function containers(v: unknown, out: unknown[] = []): unknown[] {
  if (typeof v === 'object' && v !== null && !(v instanceof Date) && !(v instanceof Map)) {
    out.push(v);
    for (const x of Object.values(v)) containers(x, out);
  }
  return out;
}

function setOwn(target: unknown, key: PathSegment, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function mutate(body: Record<string, unknown>, next: () => number): void {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
  const op = next();
  const paths = allPaths(body);
  if (op < 0.3 && paths.length > 0) {
    const path = pick(paths);
    const parent = valueAt(body, path.slice(0, -1)).value;
    const key = path[path.length - 1] as PathSegment;
    if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
    else delete (parent as Record<string, unknown>)[key];
  } else if (op < 0.8 && paths.length > 0) {
    const path = pick(paths);
    setOwn(valueAt(body, path.slice(0, -1)).value, path[path.length - 1] as PathSegment, pick(weird));
  } else {
    const target = pick(containers(body));
    if (Array.isArray(target)) target.push(pick(weird));
    else setOwn(target, pick(weirdKeys), pick(weird));
  }
}

describe('decision parser under random malformed bodies', () => {
  it('parses or throws a 4xx JevError with a param that is a path into the body', () => {
    const protoKeys = Object.getOwnPropertyNames(Object.prototype).length;
    const next = rng(20261122);
    let parsed = 0;
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const body = structuredClone(validBody) as Record<string, unknown>;
      const mutations = 1 + Math.floor(next() * 3);
      for (let m = 0; m < mutations; m++) mutate(body, next);
      let caught: unknown;
      try {
        const out = parseDecisionRequest(body);
        parsed++;
        expect(out.model).toBe('jev');
        expect(typeof out.state).toBe('string');
        expect(out.state.trim()).not.toBe('');
        for (const q of Object.values(out.questions)) expect(questionTypes).toContain(q.type);
        continue;
      } catch (e) {
        caught = e;
      }
      refused++;
      if (!(caught instanceof JevError)) throw new Error(`body #${i} threw a non-JevError: ${String(caught)}`);
      expect(caught.status).toBeGreaterThanOrEqual(400);
      expect(caught.status).toBeLessThan(500);
      expect(typeof caught.param, `body #${i}: ${caught.message}`).toBe('string');
      const path = caught.details?.['path'] as PathSegment[] | undefined;
      expect(Array.isArray(path)).toBe(true);
      expect(formatParam(path ?? [])).toBe(caught.param);
      // The field itself may be missing (a required field); its parent is always in the body.
      expect(valueAt(body, (path ?? []).slice(0, -1)).found, `body #${i}: ${caught.param}`).toBe(true);
      expect(caught.message).toContain(caught.param);
      expect(caught.message.length, caught.message.slice(0, 200)).toBeLessThan((caught.param?.length ?? 0) + 600);
    }
    expect(parsed + refused).toBe(2000);
    expect(refused).toBeGreaterThan(500);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.getOwnPropertyNames(Object.prototype)).toHaveLength(protoKeys);
  });
});
