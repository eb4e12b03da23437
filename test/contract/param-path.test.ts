import { describe, expect, it } from 'vitest';
import { formatParam, valueAt } from '../../src/contract/index.ts';

describe('formatParam', () => {
  it('writes paths as in JavaScript', () => {
    expect(formatParam([])).toBeNull();
    expect(formatParam(['state'])).toBe('state');
    expect(formatParam(['questions', 'intent', 'criteria', 'true'])).toBe('questions.intent.criteria.true');
    expect(formatParam(['questions', 'mood', 'criteria', 3])).toBe('questions.mood.criteria[3]');
    expect(formatParam(['messages', 2, 'role'])).toBe('messages[2].role');
    expect(formatParam(['questions', 'is-spam', 'type'])).toBe('questions.is-spam.type');
    expect(formatParam(['questions', 'is it?', 'type'])).toBe('questions["is it?"].type');
    expect(formatParam(['questions', '1'])).toBe('questions["1"]');
    expect(formatParam(['questions', ''])).toBe('questions[""]');
    expect(formatParam(['questions', 'a.b'])).toBe('questions["a.b"]');
  });
});

describe('valueAt', () => {
  it('reads own properties only', () => {
    const body = { a: [{ b: 1 }] };
    expect(valueAt(body, ['a', 0, 'b'])).toEqual({ found: true, value: 1 });
    expect(valueAt(body, ['a', 1])).toEqual({ found: false, value: undefined });
    expect(valueAt(body, ['toString'])).toEqual({ found: false, value: undefined });
  });
});
