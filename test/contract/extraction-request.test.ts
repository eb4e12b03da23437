import { describe, expect, it } from 'vitest';
import {
  daysInMonth,
  extractionAnswerSchema,
  isCalendarDate,
  parseExtractionRequest,
  type ExtractionRequest,
} from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const valid = { model: 'jev', state: 'Invoice INV-7 total 12.50 due 2026-03-01', fields: { total: { type: 'number', decimals: 2 } } };
const withField = (f: unknown): unknown => ({ ...valid, fields: { f } });

describe('parseExtractionRequest', () => {
  it('normalizes a valid request exactly', () => {
    const expected: ExtractionRequest = {
      model: 'jev',
      state: valid.state,
      parts: [{ type: 'text', text: valid.state }],
      fields: { total: { type: 'number', instructions: '', unit: null, integer: false, decimals: 2 } },
      referenceDate: null,
    };
    expect(parseExtractionRequest(valid)).toEqual(expected);
  });

  it('reads every field type with its defaults', () => {
    const r = parseExtractionRequest({
      ...valid,
      fields: {
        a: { type: 'text', instructions: 'the number' },
        b: { type: 'number', integer: true, unit: 'USD' },
        c: { type: 'date', instructions: null },
        d: { type: 'time' },
        e: { type: 'datetime', instructions: { hint: 'x' } },
        f: { type: 'duration' },
        g: { type: 'list', items: 'number', decimals: 1 },
      },
      referenceDate: '2024-02-29',
    });
    expect(r.fields['a']).toEqual({ type: 'text', instructions: 'the number' });
    expect(r.fields['b']).toEqual({ type: 'number', instructions: '', unit: 'USD', integer: true, decimals: 0 });
    expect(r.fields['c']).toEqual({ type: 'date', instructions: '' });
    expect(r.fields['e']).toEqual({ type: 'datetime', instructions: '{\n  "hint": "x"\n}' });
    expect(r.fields['f']).toEqual({ type: 'duration', instructions: '', unit: 'seconds', integer: false, decimals: 6 });
    expect(r.fields['g']).toEqual({ type: 'list', instructions: '', items: 'number', integer: false, decimals: 1 });
    expect(r.referenceDate).toBe('2024-02-29');
  });

  it('reads state parts, text and json, joined with a newline', () => {
    const r = parseExtractionRequest({ ...valid, state: [{ type: 'text', text: 'a' }, { type: 'json', value: { b: 1, a: 2 } }, { type: 'text', text: 'c', providerOptions: {} }] });
    expect(r.parts).toEqual([{ type: 'text', text: 'a' }, { type: 'json', text: '{\n  "a": 2,\n  "b": 1\n}' }, { type: 'text', text: 'c' }]);
    expect(r.state).toBe('a\n{\n  "a": 2,\n  "b": 1\n}\nc');
  });

  it('refuses bad bodies naming the field', () => {
    expectJevError(() => parseExtractionRequest(withField({ type: 'email' })), 'invalid_request', 400, 'fields.f.type');
    expectJevError(() => parseExtractionRequest(withField({ type: 'number', decimals: 7 })), 'invalid_request', 400, 'fields.f.decimals');
    expectJevError(() => parseExtractionRequest(withField({ type: 'number', decimals: -1 })), 'invalid_request', 400, 'fields.f.decimals');
    expectJevError(() => parseExtractionRequest(withField({ type: 'number', decimals: 1.5 })), 'invalid_request', 400, 'fields.f.decimals');
    expectJevError(() => parseExtractionRequest(withField({ type: 'duration', unit: 'fortnights' })), 'invalid_request', 400, 'fields.f.unit');
    expectJevError(() => parseExtractionRequest(withField({ type: 'list', items: 'time' })), 'invalid_request', 400, 'fields.f.items');
    expectJevError(() => parseExtractionRequest(withField({ type: 'list' })), 'invalid_request', 400, 'fields.f.items');
    expectJevError(() => parseExtractionRequest(withField('date')), 'invalid_request', 400, 'fields.f');
    expectJevError(() => parseExtractionRequest({ ...valid, fields: {} }), 'invalid_request', 400, 'fields');
    expectJevError(() => parseExtractionRequest({ ...valid, fields: undefined }), 'invalid_request', 400, 'fields');
    for (const bad of ['2023-02-29', '2024-13-01', '24-01-01', 20240101, '2024-1-1'])
      expectJevError(() => parseExtractionRequest({ ...valid, referenceDate: bad }), 'invalid_request', 400, 'referenceDate');
    expectJevError(() => parseExtractionRequest({ ...valid, state: '   ' }), 'invalid_request', 400, 'state');
    expectJevError(() => parseExtractionRequest({ ...valid, state: [] }), 'invalid_request', 400, 'state');
    expectJevError(() => parseExtractionRequest({ ...valid, state: [{ type: 'file', data: 'x', mediaType: 'image/png' }] }), 'invalid_request', 400, 'state[0].type');
    expectJevError(() => parseExtractionRequest({ ...valid, state: [{ type: 'text', text: 3 }] }), 'invalid_request', 400, 'state[0].text');
    expectJevError(() => parseExtractionRequest({ ...valid, model: 'gpt' }), 'model_not_found', 404, 'model');
  });
});

describe('calendar dates', () => {
  it('agrees with the JavaScript calendar for every day of 1896–2104 and the century years', () => {
    const wrong: string[] = [];
    let checked = 0;
    for (let year = 1896; year <= 2104; year++) {
      for (let month = 0; month <= 13; month++) {
        const real = month >= 1 && month <= 12 ? new Date(Date.UTC(year, month, 0)).getUTCDate() : 0;
        if (real > 0 && daysInMonth(year, month) !== real) wrong.push(`${year}-${month}`);
        for (let day = 0; day <= 32; day++) {
          const s = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
          if (isCalendarDate(s) !== (day >= 1 && day <= real)) wrong.push(s);
          checked++;
        }
      }
    }
    expect(checked).toBe(209 * 14 * 33);
    expect(wrong).toEqual([]);
    expect(isCalendarDate('2000-02-29')).toBe(true);
    expect(isCalendarDate('1900-02-29')).toBe(false);
  });
});

describe('extractionAnswerSchema', () => {
  it('checks the answer shapes', () => {
    expect(extractionAnswerSchema.safeParse({ type: 'refusal' }).success).toBe(true);
    expect(extractionAnswerSchema.safeParse({ type: 'number', value: null, guess: 3, pNull: 0.7, confidence: 0.2 }).success).toBe(true);
    expect(extractionAnswerSchema.safeParse({ type: 'number', value: 3, guess: 3, pNull: 1.2, confidence: 0.2 }).success).toBe(false);
    expect(extractionAnswerSchema.safeParse({ type: 'text', value: 'a', guess: 'a', pNull: 0, confidence: 1, source: { type: 'text', part: 0, start: 3, end: 3 } }).success).toBe(false);
  });
});
