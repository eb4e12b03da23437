import { describe, expect, it } from 'vitest';
import { idsBody, itemLength, itemToken, type PromptLogProbItem } from '../../src/server/backend.ts';

/** The engine request's ids, written by hand into bytes (src/server/backend.ts), are JSON.stringify's text exactly. */
describe('idsBody', () => {
  const ids = [0, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 151_935, 9_999_999];
  const pick = (n: number, seed: number) => Array.from({ length: n }, (_, i) => ids[(seed * 7 + i * 13) % ids.length]!);

  it('writes what JSON.stringify writes, shared and frozen segments included, twice in a row', () => {
    const state = Object.freeze(pick(40, 1));
    const prompt = Object.freeze(pick(9, 2));
    for (let round = 0; round < 2; round++) {
      for (let seed = 0; seed < 50; seed++) {
        const items: PromptLogProbItem[] = Array.from({ length: 1 + (seed % 5) }, (_, i) => ({
          segments: [state, seed % 3 === 0 ? [] : prompt, pick(i % 3, seed + i), ...(seed % 4 === 0 ? [pick(2, seed)] : [])],
          from: 1,
        }));
        const want = `{"model":"é",${JSON.stringify(items.map((it) => it.segments.flat()))},"x":1}`;
        expect(idsBody('{"model":"é",', items, ',"x":1}').toString('utf8')).toBe(want);
        for (const it of items) {
          const flat = it.segments.flat();
          expect(itemLength(it)).toBe(flat.length);
          for (let k = 0; k <= flat.length; k++) expect(itemToken(it, k)).toBe(flat[k]);
        }
      }
    }
  });

  it('refuses what is not a token id', () => {
    for (const bad of [-1, 1.5, Number.NaN, 10_000_000]) expect(() => idsBody('', [{ segments: [[1, bad]], from: 1 }], '')).toThrow(/not a token id/);
  });
});
