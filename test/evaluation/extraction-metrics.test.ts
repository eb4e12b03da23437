/**
 * The extraction metrics against independent computations: AUROC against a brute-force count over
 * every (absent, present) pair, ECE against a direct per-bin sum, Brier and span IoU by hand;
 * the set parser's errors name the line and the field; the run turns answers into observations.
 */
import { describe, expect, it } from 'vitest';
import { Xoshiro128 } from '../../scripts/models/prng.ts';
import type { ExtractionResponse } from '../../src/contract/extraction-response.ts';
import { auroc, binsEce, confidenceBins, extractionMetrics, sameValue, spanIou } from '../../src/evaluation/extraction-metrics.ts';
import { isExtractionSet, parseExtractionSet } from '../../src/evaluation/extraction-dataset.ts';
import { runExtractionEvaluation } from '../../src/evaluation/extraction-evaluate.ts';
import type { ExtractionObservation } from '../../src/evaluation/extraction-types.ts';
import { DatasetError } from '../../src/evaluation/dataset-error.ts';

/** The share of (positive, negative) pairs where the positive scores higher, ties one half. */
function bruteAuroc(scores: number[], pos: boolean[]): number {
  let wins = 0;
  let pairs = 0;
  scores.forEach((a, i) => {
    if (!pos[i]) return;
    scores.forEach((b, j) => {
      if (pos[j]) return;
      pairs += 1;
      wins += a > b ? 1 : a === b ? 0.5 : 0;
    });
  });
  return wins / pairs;
}

describe('auroc', () => {
  it('equals the brute-force pair count on random scores with ties', () => {
    const rng = new Xoshiro128(7);
    for (let trial = 0; trial < 50; trial++) {
      const n = 2 + rng.nextInt(40);
      const scores = Array.from({ length: n }, () => rng.nextInt(6) / 5); // many ties
      const pos = Array.from({ length: n }, () => rng.nextInt(2) === 1);
      if (pos.every(Boolean) || !pos.some(Boolean)) continue;
      expect(auroc(scores, pos)).toBeCloseTo(bruteAuroc(scores, pos), 12);
    }
  });
  it('is 1 for a perfect separation, 0 for the reverse, null with one class', () => {
    expect(auroc([0.9, 0.8, 0.1], [true, true, false])).toBe(1);
    expect(auroc([0.1, 0.8, 0.9], [true, false, false])).toBe(0);
    expect(auroc([0.1, 0.2], [true, true])).toBeNull();
  });
});

describe('confidence calibration', () => {
  it('ECE equals a direct sum over the items grouped by bin', () => {
    const rng = new Xoshiro128(3);
    const conf = Array.from({ length: 200 }, () => rng.nextInt(1001) / 1000);
    const right = conf.map((c) => rng.nextInt(1000) / 1000 < c * 0.8);
    const direct = (() => {
      let total = 0;
      for (let b = 0; b < 10; b++) {
        const inBin = conf.map((c, i) => i).filter((i) => (b === 9 ? conf[i]! >= 0.9 : conf[i]! >= b / 10 && conf[i]! < (b + 1) / 10));
        if (inBin.length === 0) continue;
        const acc = inBin.filter((i) => right[i]).length / inBin.length;
        const mc = inBin.reduce((s, i) => s + conf[i]!, 0) / inBin.length;
        total += (inBin.length / conf.length) * Math.abs(acc - mc);
      }
      return total;
    })();
    expect(binsEce(confidenceBins(conf, right))).toBeCloseTo(direct, 12);
  });
});

describe('values and spans', () => {
  it('compares values by type; null only equals null', () => {
    expect(sameValue(177, 177.0)).toBe(true);
    expect(sameValue(177, 177.01)).toBe(false);
    expect(sameValue('2026-04-01', '2026-04-01')).toBe(true);
    expect(sameValue(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(sameValue(['a', 'b'], ['b', 'a'])).toBe(false);
    expect(sameValue(null, null)).toBe(true);
    expect(sameValue(null, 'x')).toBe(false);
  });
  it('IoU is overlap over union, 0 across parts', () => {
    expect(spanIou({ part: 0, start: 0, end: 10 }, { part: 0, start: 5, end: 15 })).toBeCloseTo(5 / 15, 12);
    expect(spanIou({ part: 0, start: 0, end: 10 }, { part: 1, start: 0, end: 10 })).toBe(0);
    expect(spanIou({ part: 0, start: 3, end: 7 }, { part: 0, start: 3, end: 7 })).toBe(1);
  });
});

describe('extractionMetrics', () => {
  const o = (expected: unknown, value: unknown, guess: unknown, pNull: number | null, confidence: number | null, extra: Partial<ExtractionObservation> = {}): ExtractionObservation => ({
    item: 0, line: 1, id: 'x', key: 'k', type: 'number', expected: expected as never, value: value as never, guess: guess as never,
    pNull, confidence, refused: pNull === null, source: null, expectedSource: null, ...extra,
  });
  it('exact match counts null == null and never a refusal; Brier and guess accuracy by hand', () => {
    const obs = [
      o(5, 5, 5, 0.1, 0.9),
      o(null, null, 3, 0.8, 0.4),
      o(7, null, 7, 0.6, 0.7), // absent by pNull, right guess
      o(null, 2, 2, 0.3, 0.5),
      o(4, null, null, null, null), // refused
    ];
    const m = extractionMetrics('number', obs);
    expect(m.items).toBe(5);
    expect(m.refusals).toBe(1);
    expect(m.exact_match).toBeCloseTo(2 / 5, 12);
    // (pNull − [expected null])²: 0.1 vs 0, 0.8 vs 1, 0.6 vs 0, 0.3 vs 1.
    expect(m.null_brier).toBeCloseTo((0.1 ** 2 + 0.2 ** 2 + 0.6 ** 2 + 0.7 ** 2) / 4, 12);
    expect(m.null_auroc).toBeCloseTo(bruteAuroc([0.1, 0.8, 0.6, 0.3], [false, true, false, true]), 12);
    expect(m.guess_accuracy).toBe(1);
  });
  it('span agreement over the labelled items: exact share and mean IoU, a missing source scores 0', () => {
    const at = (start: number, end: number) => ({ part: 0, start, end });
    const m = extractionMetrics('text', [
      o('a', 'a', 'a', 0, 1, { source: at(0, 4), expectedSource: at(0, 4) }),
      o('a', 'a', 'a', 0, 1, { source: at(2, 6), expectedSource: at(0, 4) }),
      o('a', 'a', 'a', 0, 1, { source: null, expectedSource: at(0, 4) }),
      o('a', 'a', 'a', 0, 1),
    ]);
    expect(m.span_items).toBe(3);
    expect(m.span_exact).toBeCloseTo(1 / 3, 12);
    expect(m.span_iou).toBeCloseTo((1 + 2 / 6 + 0) / 3, 12);
  });
});

describe('parseExtractionSet', () => {
  const line = (over: Record<string, unknown> = {}) =>
    JSON.stringify({ id: 'a', state: 'Total 12.50 EUR', fields: { total: { type: 'number', decimals: 2 }, po: { type: 'text' } }, expected: { total: 12.5, po: null }, sources: { total: { part: 0, start: 6, end: 11 } }, ...over });
  it('reads a line, and tells an extraction set from a decision set', () => {
    const [item] = parseExtractionSet(line());
    expect(item!.expected).toEqual({ total: 12.5, po: null });
    expect(item!.types).toEqual({ total: 'number', po: 'text' });
    expect(isExtractionSet(line())).toBe(true);
    expect(isExtractionSet(JSON.stringify({ state: 's', questions: {}, labels: {} }))).toBe(false);
  });
  const refuses = (text: string, lineNo: number, field: string | null) => {
    try {
      parseExtractionSet(text);
    } catch (e) {
      expect(e).toBeInstanceOf(DatasetError);
      expect((e as DatasetError).line).toBe(lineNo);
      expect((e as DatasetError).field).toBe(field);
      return;
    }
    throw new Error('not refused');
  };
  it('names the line and the field of what it refuses', () => {
    refuses(`${line()}\n${line({ id: 'b', fields: { total: { type: 'number', decimals: 9 } }, expected: { total: 1 } })}`, 2, 'fields.total.decimals');
    refuses(line({ expected: { total: 12.5 } }), 1, 'expected.po');
    refuses(line({ expected: { total: '12.50', po: null } }), 1, 'expected.total');
    refuses(line({ sources: { total: { part: 0, start: 6, end: 99 } } }), 1, 'sources.total');
    refuses(line({ referenceDate: '2026-02-30' }), 1, 'referenceDate');
    refuses(`${line()}\n${line()}`, 2, 'id');
  });
});

describe('runExtractionEvaluation', () => {
  it('observes every field of every item through the extract function given, and reports by type and by field', async () => {
    const text = [
      JSON.stringify({ id: 'a', state: 'Total 12.50', fields: { total: { type: 'number' }, po: { type: 'text' } }, expected: { total: 12.5, po: null } }),
      JSON.stringify({ id: 'b', state: 'PO 77 total 3', fields: { total: { type: 'number' }, po: { type: 'text' } }, expected: { total: 3, po: 'PO 77' }, sources: { po: { part: 0, start: 0, end: 5 } } }),
    ].join('\n');
    const items = parseExtractionSet(text);
    const answers: ExtractionResponse['answers'][] = [
      { total: { type: 'number', value: 12.5, guess: 12.5, pNull: 0.1, confidence: 0.8 }, po: { type: 'text', value: null, guess: 'Total', pNull: 0.9, confidence: 0.2, source: { type: 'text', part: 0, start: 0, end: 5 } } },
      { total: { type: 'number', value: 4, guess: 4, pNull: 0.2, confidence: 0.6 }, po: { type: 'refusal' } },
    ];
    let calls = 0;
    const { report, observations } = await runExtractionEvaluation({
      items,
      dataName: 'x.jsonl',
      extract: async () => ({ id: 'r', object: 'extraction', model: 'm', provider: 'jev', answers: answers[calls++]!, usage: { input_tokens: 1, output_tokens: 1 } as never }),
    });
    expect(observations).toHaveLength(4);
    expect(report.by_type.map((m) => m.key)).toEqual(['number', 'text']);
    const number = report.by_type[0]!;
    expect(number.exact_match).toBe(0.5);
    expect(number.guess_accuracy).toBe(0.5);
    const po = report.by_field.find((m) => m.key === 'po')!;
    expect(po.refusals).toBe(1);
    expect(po.exact_match).toBe(0.5);
    expect(po.span_items).toBe(0); // the labelled span's item was refused
    expect(report.model).toBe('m');
  });
});
