import { describe, expect, it } from 'vitest';
import { limits, parseDecisionRequest } from '../../src/contract/index.ts';
import type { DecisionRequest } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const noul = { type: 'noul', instructions: 'Is the customer angry?', criteria: { true: 'angry', false: 'calm' } };
const valid = { model: 'jev', state: 'I want a refund now!', questions: { angry: noul } };
const withQuestion = (q: unknown): unknown => ({ ...valid, questions: { q } });
const parseQuestion = (q: unknown) => parseDecisionRequest(withQuestion(q)).questions['q'];

describe('parseDecisionRequest: the whole body', () => {
  it('accepts a valid request and normalizes it exactly', () => {
    const expected: DecisionRequest = {
      model: 'jev',
      state: 'I want a refund now!',
      questions: { angry: { type: 'noul', instructions: 'Is the customer angry?', criteria: { true: 'angry', false: 'calm' } } },
      calibrate: false,
      calibration: null,
      prediction_set: null,
      include: [],
    };
    expect(parseDecisionRequest(valid)).toEqual(expected);
  });

  it('reads calibrate, default false', () => {
    expect(parseDecisionRequest({ ...valid, calibrate: true }).calibrate).toBe(true);
    expect(parseDecisionRequest({ ...valid, calibrate: false }).calibrate).toBe(false);
    expect(parseDecisionRequest({ ...valid, calibrate: null }).calibrate).toBe(false);
    expectJevError(() => parseDecisionRequest({ ...valid, calibrate: 'yes' }), 'invalid_request', 400, 'calibrate');
    expectJevError(() => parseDecisionRequest({ ...valid, calibrate: 1 }), 'invalid_request', 400, 'calibrate');
  });

  it('ignores unknown top-level fields', () => {
    const out = parseDecisionRequest({ ...valid, temperature: 3, user: 'x', stream: true });
    expect(Object.keys(out).sort()).toEqual(['calibrate', 'calibration', 'include', 'model', 'prediction_set', 'questions', 'state']);
  });

  it('refuses a body that is not an object, with param null', () => {
    for (const body of [null, undefined, 'x', 5, [], [valid], true]) {
      expectJevError(() => parseDecisionRequest(body), 'invalid_request', 400, null);
    }
  });

  it('tells a chat completion body that this is the decision endpoint', () => {
    const err = expectJevError(
      () => parseDecisionRequest({ model: 'jev', messages: [{ role: 'user', content: 'hi' }] }),
      'invalid_request', 400, 'messages',
    );
    expect(err.message).toMatch(/decision request/);
    expect(err.message).toMatch(/not a chat completion request/);
    // With questions present, messages is just an unknown field.
    expect(parseDecisionRequest({ ...valid, messages: [] }).questions['angry']?.type).toBe('noul');
  });
});

describe('parseDecisionRequest: model', () => {
  it('must be "jev"', () => {
    expectJevError(() => parseDecisionRequest({ ...valid, model: 'gpt-4o' }), 'model_not_found', 404, 'model');
    expectJevError(() => parseDecisionRequest({ ...valid, model: 'JEV' }), 'model_not_found', 404, 'model');
    expectJevError(() => parseDecisionRequest({ ...valid, model: '' }), 'model_not_found', 404, 'model');
  });
  it('is required and a string', () => {
    const { model: _, ...noModel } = valid;
    expect(expectJevError(() => parseDecisionRequest(noModel), 'invalid_request', 400, 'model').message).toMatch(/required/);
    for (const model of [5, null, ['jev'], { id: 'jev' }, true]) {
      expectJevError(() => parseDecisionRequest({ ...valid, model }), 'invalid_request', 400, 'model');
    }
  });
  it('is checked before the other fields', () => {
    expectJevError(() => parseDecisionRequest({ model: 'other' }), 'model_not_found', 404, 'model');
  });
});

describe('parseDecisionRequest: questions', () => {
  it('is required: an object of 1..maxQuestions entries', () => {
    const { questions: _, ...noQuestions } = valid;
    expectJevError(() => parseDecisionRequest(noQuestions), 'invalid_request', 400, 'questions');
    expectJevError(() => parseDecisionRequest({ ...valid, questions: {} }), 'invalid_request', 400, 'questions');
    expectJevError(() => parseDecisionRequest({ ...valid, questions: [noul] }), 'invalid_request', 400, 'questions');
    expectJevError(() => parseDecisionRequest({ ...valid, questions: null }), 'invalid_request', 400, 'questions');
    expectJevError(() => parseDecisionRequest({ ...valid, questions: 'q' }), 'invalid_request', 400, 'questions');
  });

  it('accepts exactly maxQuestions and refuses 10,000 fast', () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, noul]));
    expect(Object.keys(parseDecisionRequest({ ...valid, questions: many(limits.maxQuestions) }).questions)).toHaveLength(256);
    expectJevError(() => parseDecisionRequest({ ...valid, questions: many(limits.maxQuestions + 1) }), 'invalid_request', 400, 'questions');
    // "fast" by construction, not by a clock: the count is refused before any question is read, so none of
    // 10,000 getters runs (a wall-clock bound flakes on a loaded machine; speed is the bench's business)
    let read = 0;
    const counted: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) Object.defineProperty(counted, `q${i}`, { enumerable: true, get: () => (read++, noul) });
    const err = expectJevError(() => parseDecisionRequest({ ...valid, questions: counted }), 'invalid_request', 400, 'questions');
    expect(read).toBe(0);
    expect(err.message).toMatch(/at most 256 questions, got 10000/);
  });

  it('keys: any non-empty string up to maxKeyChars', () => {
    const keys = ['a', 'is it spam?', 'très bien', '1', 'a.b', 'k'.repeat(limits.maxKeyChars), 'toString', 'hasOwnProperty'];
    const out = parseDecisionRequest({ ...valid, questions: Object.fromEntries(keys.map((k) => [k, noul])) });
    expect(Object.keys(out.questions).sort()).toEqual([...keys].sort());
    expectJevError(() => parseDecisionRequest({ ...valid, questions: { '': noul } }), 'invalid_request', 400, 'questions[""]');
    const long = 'k'.repeat(limits.maxKeyChars + 1);
    expectJevError(() => parseDecisionRequest({ ...valid, questions: { [long]: noul } }), 'invalid_request', 400, 'questions');
  });

  it('refuses a __proto__ key clearly and without pollution', () => {
    const body = JSON.parse(`{"model":"jev","state":"s","questions":{"__proto__":{"type":"noul","polluted":1},"x":${JSON.stringify(noul)}}}`) as unknown;
    const err = expectJevError(() => parseDecisionRequest(body), 'invalid_request', 400, 'questions.__proto__');
    expect(err.message).toMatch(/reserved/);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>)['type']).toBeUndefined();
  });

  it('reads a constructor key as an ordinary question key', () => {
    const body = JSON.parse(`{"model":"jev","state":"s","questions":{"constructor":${JSON.stringify(noul)}}}`) as unknown;
    const out = parseDecisionRequest(body);
    expect(Object.keys(out.questions)).toEqual(['constructor']);
    expect(Object.hasOwn(out.questions, 'constructor')).toBe(true);
    expect(out.questions['constructor']).toEqual({ ...noul });
    expect(({} as Record<string, unknown>).constructor).toBe(Object);
  });

  it('type: one of noul, choice, score', () => {
    const err = expectJevError(() => parseQuestion({ ...noul, type: 'boolean' }), 'invalid_request', 400, 'questions.q.type');
    expect(err.message).toMatch(/"noul", "choice", "score"/);
    expectJevError(() => parseQuestion({ instructions: 'x' }), 'invalid_request', 400, 'questions.q.type');
    expectJevError(() => parseQuestion({ ...noul, type: 5 }), 'invalid_request', 400, 'questions.q.type');
    expectJevError(() => parseQuestion({ ...noul, type: 'NOUL' }), 'invalid_request', 400, 'questions.q.type');
  });

  it('a question must be an object', () => {
    for (const q of [5, 'noul', null, [noul], true]) expectJevError(() => parseQuestion(q), 'invalid_request', 400, 'questions.q');
  });

  it('instructions: a string; omitted or null becomes ""', () => {
    expect(parseQuestion({ ...noul, instructions: undefined })?.instructions).toBe('');
    expect(parseQuestion({ ...noul, instructions: null })?.instructions).toBe('');
    expect(parseQuestion({ ...noul, instructions: '' })?.instructions).toBe('');
    expectJevError(() => parseQuestion({ ...noul, instructions: 5 }), 'invalid_request', 400, 'questions.q.instructions');
    expectJevError(() => parseQuestion({ ...noul, instructions: ['a'] }), 'invalid_request', 400, 'questions.q.instructions');
    const huge = 'x'.repeat(limits.maxTextChars + 1);
    const err = expectJevError(() => parseQuestion({ ...noul, instructions: huge }), 'invalid_request', 400, 'questions.q.instructions');
    expect(err.message.length).toBeLessThan(300);
  });

  it('ignores unknown fields of a question', () => {
    expect(parseQuestion({ ...noul, id: 7, description: 'x' })).toEqual(noul);
  });
});

describe('parseDecisionRequest: noul criteria', () => {
  const q = (criteria: unknown) => parseQuestion({ type: 'noul', instructions: 'i', criteria });
  it('accepts true and false', () => {
    expect(q({ true: 'a', false: 'b' })).toEqual({ type: 'noul', instructions: 'i', criteria: { true: 'a', false: 'b' } });
  });
  it('accepts missing, null, partial and null values: missing ones are null', () => {
    expect(parseQuestion({ type: 'noul', instructions: 'i' })?.criteria).toEqual({ true: null, false: null });
    expect(q(null)?.criteria).toEqual({ true: null, false: null });
    expect(q({})?.criteria).toEqual({ true: null, false: null });
    expect(q({ true: 'a' })?.criteria).toEqual({ true: 'a', false: null });
    expect(q({ false: 'b' })?.criteria).toEqual({ true: null, false: 'b' });
    expect(q({ true: null, false: 'b' })?.criteria).toEqual({ true: null, false: 'b' });
    expect(q({ true: '', false: 'b' })?.criteria).toEqual({ true: null, false: 'b' });
  });
  it('refuses any other key, naming it', () => {
    const err = expectJevError(() => q({ true: 'a', false: 'b', maybe: 'c' }), 'invalid_request', 400, 'questions.q.criteria.maybe');
    expect(err.message).toMatch(/"true" and "false"/);
    expectJevError(() => q({ True: 'a' }), 'invalid_request', 400, 'questions.q.criteria.True');
    expectJevError(() => q(JSON.parse('{"__proto__":{"polluted":1}}')), 'invalid_request', 400, 'questions.q.criteria.__proto__');
    expectJevError(() => q(JSON.parse('{"constructor":"x"}')), 'invalid_request', 400, 'questions.q.criteria.constructor');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
  it('refuses wrong types, naming the field', () => {
    expectJevError(() => q({ true: 5 }), 'invalid_request', 400, 'questions.q.criteria.true');
    expectJevError(() => q({ false: ['x'] }), 'invalid_request', 400, 'questions.q.criteria.false');
    expectJevError(() => q(['yes', 'no']), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q('yes'), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q({ true: 'x'.repeat(limits.maxTextChars + 1) }), 'invalid_request', 400, 'questions.q.criteria.true');
  });
});

describe('parseDecisionRequest: choice criteria', () => {
  const q = (criteria: unknown) => parseQuestion({ type: 'choice', instructions: 'Which?', criteria });
  it('maps option keys to descriptions; null and "" mean the key alone', () => {
    expect(q({ billing: 'About money', tech: null, other: '' })).toEqual({
      type: 'choice', instructions: 'Which?', criteria: { billing: 'About money', tech: null, other: null },
    });
  });
  it('accepts any non-empty option key', () => {
    const keys = ['a b c', 'très bien', '日本語', 'x'.repeat(limits.maxKeyChars), 'toString'];
    expect(Object.keys(q(Object.fromEntries(keys.map((k) => [k, null])))?.criteria ?? {})).toEqual(keys);
  });
  it('needs 2..255 options', () => {
    const err = expectJevError(() => q({ only: 'one' }), 'invalid_request', 400, 'questions.q.criteria');
    expect(err.message).toMatch(/at least 2 options, got 1/);
    const opts = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null]));
    expect(Object.keys(q(opts(255))?.criteria ?? {})).toHaveLength(255);
    expectJevError(() => q(opts(256)), 'invalid_request', 400, 'questions.q.criteria');
  });
  it('refuses wrong shapes, naming the field', () => {
    expectJevError(() => parseQuestion({ type: 'choice' }), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q(['a', 'b']), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q(null), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q({ a: 'x', b: 5 }), 'invalid_request', 400, 'questions.q.criteria.b');
    expectJevError(() => q({ a: 'x', 'b c': {} }), 'invalid_request', 400, 'questions.q.criteria["b c"]');
    expectJevError(() => q({ a: 'x', '': 'y' }), 'invalid_request', 400, 'questions.q.criteria[""]');
  });
  it('refuses __proto__ and keeps constructor as an option', () => {
    const polluting = JSON.parse('{"a":"x","__proto__":{"polluted":1}}') as unknown;
    expectJevError(() => q(polluting), 'invalid_request', 400, 'questions.q.criteria.__proto__');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const out = q(JSON.parse('{"constructor":"builds","toString":null}'));
    expect(out?.criteria).toEqual({ constructor: 'builds', toString: null });
  });
});

describe('parseDecisionRequest: score criteria', () => {
  const q = (criteria: unknown) => parseQuestion({ type: 'score', instructions: 'How angry?', criteria });
  it('is an ordered array of 2..maxGrades labels', () => {
    expect(q(['calm', 'angry'])).toEqual({ type: 'score', instructions: 'How angry?', criteria: ['calm', 'angry'] });
    const eleven = Array.from({ length: 11 }, (_, i) => String(i));
    expect(q(eleven)?.criteria).toEqual(eleven);
    const hundredOne = Array.from({ length: 101 }, (_, i) => `${i}%`);
    expect(q(hundredOne)?.criteria).toEqual(hundredOne);
  });
  it('refuses 1 label, too many labels, and bad labels', () => {
    expect(expectJevError(() => q(['only']), 'invalid_request', 400, 'questions.q.criteria').message).toMatch(/at least 2 grade labels, got 1/);
    expectJevError(() => q([]), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q(Array.from({ length: 102 }, (_, i) => `${i}`)), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q(['a', 'b', '']), 'invalid_request', 400, 'questions.q.criteria[2]');
    expectJevError(() => q(['a', 3, 'c']), 'invalid_request', 400, 'questions.q.criteria[1]');
    expectJevError(() => q(['a', null]), 'invalid_request', 400, 'questions.q.criteria[1]');
    expectJevError(() => q({ 0: 'a', 1: 'b' }), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => parseQuestion({ type: 'score' }), 'invalid_request', 400, 'questions.q.criteria');
    expectJevError(() => q(['a', 'x'.repeat(limits.maxTextChars + 1)]), 'invalid_request', 400, 'questions.q.criteria[1]');
  });
});

describe('parseDecisionRequest: error precedence', () => {
  it('reports the most top-level fault first', () => {
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`q${i}`, { type: 'bad' }]));
    expectJevError(() => parseDecisionRequest({ ...valid, questions: many }), 'invalid_request', 400, 'questions');
    expectJevError(() => parseDecisionRequest({ model: 'jev', questions: { q: { type: 'bad' } } }), 'invalid_request', 400, 'state');
  });
});
