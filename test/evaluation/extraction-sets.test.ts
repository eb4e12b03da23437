/**
 * The two labelled extraction sets under eval/: what write-examples.ts writes (byte for byte), read
 * by the set parser, and their labels consistent with their texts: every labelled span holds the
 * value's surface form, every expected date is a calendar date, a relative date is the weekday it names.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isCalendarDate } from '../../src/contract/extraction-request.ts';
import { isExtractionSet, parseExtractionSet } from '../../src/evaluation/extraction-dataset.ts';
import { exampleFiles } from '../../scripts/eval/write-examples.ts';

const REPO = resolve(import.meta.dirname, '../..');
const SETS = ['eval/invoices.extraction.jsonl', 'eval/appointments.extraction.jsonl'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

describe.each(SETS)('%s', (path) => {
  const text = readFileSync(resolve(REPO, path), 'utf8');
  const items = parseExtractionSet(text);

  it('is what write-examples.ts writes', () => {
    expect(exampleFiles()[path]).toBe(text);
    expect(isExtractionSet(text)).toBe(true);
    expect(items).toHaveLength(40);
  });

  it('has values and nulls for every field, and each labelled span holds the value as written', () => {
    let spans = 0;
    for (const item of items) {
      const state = item.request.state as string;
      for (const [key, s] of Object.entries(item.sources)) {
        const written = state.slice(s.start, s.end);
        const want = item.expected[key];
        if (typeof want === 'number') expect(Number(written), `${item.id}.${key}`).toBe(want);
        else if (item.types[key] === 'date') expect(written, `${item.id}.${key}`).toMatch(/^\d{4}-\d\d-\d\d$|^\d{1,2} [A-Z][a-z]+$/);
        else expect(written, `${item.id}.${key}`).toBe(want);
        spans += 1;
      }
      for (const [key, v] of Object.entries(item.expected)) {
        if (item.types[key] === 'date' && v !== null) expect(isCalendarDate(v as string), `${item.id}.${key}`).toBe(true);
        if (v === null) expect(item.sources[key], `${item.id}.${key}: no span for an absent value`).toBeUndefined();
      }
      const next = /next (\w+day)/.exec(state);
      if (next) {
        const date = item.expected['date'] as string;
        const days = (Date.parse(`${date}T00:00:00Z`) - Date.parse(`${item.request.referenceDate}T00:00:00Z`)) / 86_400_000;
        expect(DAYS[new Date(`${date}T00:00:00Z`).getUTCDay()], item.id).toBe(next[1]);
        expect(days).toBeGreaterThanOrEqual(1);
        expect(days).toBeLessThanOrEqual(7);
      }
    }
    expect(spans).toBeGreaterThan(100);
    // Both classes of null detection occur for some field, so its AUROC is defined.
    const keys = Object.keys(items[0]!.expected);
    expect(keys.some((k) => items.some((i) => i.expected[k] === null) && items.some((i) => i.expected[k] !== null))).toBe(true);
  });
});
