/**
 * Batched rows (model/kv-rows.ts, LanguageModel.forwardRows, extraction/decode-rows.ts): caches of
 * different lengths stacked as the rows of one batch, advanced together, rows dropped between
 * steps. Every row's distribution is checked against an independent computation (the whole
 * sequence in one full pass, test/support/reference.ts), the passes are counted, and every tensor
 * made is disposed. A GroupQueryAttention graph, whose attention reads a count of positions
 * rather than the mask, is found out by the probe and decodes each field alone.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExtractionRequest } from '../../src/contract/index.ts';
import { extract } from '../../src/engine/extraction/extract.ts';
import { ROWS_MAX } from '../../src/engine/extraction/decode-rows.ts';
import { LanguageModel } from '../../src/engine/model/language-model.ts';
import { keepRows, stackRows, type CacheRows } from '../../src/engine/model/kv-rows.ts';
import { selectRows } from '../support/select-rows.ts';
import { cachesOf, expectEachAlone, withRowWidths } from '../support/batched-rows.ts';
import { GENERATED, loadEngine, TINY } from '../support/models.ts';
import { referenceLogProbs } from '../support/reference.ts';

const GQA = 'tiny-random-llama-gqa';
const GEMMA = 'tiny-random-gemma3';

const BODY = {
  model: 'jev',
  state: [{ type: 'text', text: 'Invoice INV-7 from Acme Ltd, total 1,234.50 EUR, due 2024-02-29, call at 14:30.' }],
  fields: {
    vendor: { type: 'text' },
    total: { type: 'number', decimals: 2 },
    due: { type: 'date' },
    callback: { type: 'time' },
    note: { type: 'text', instructions: 'Any note?' },
  },
};

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

for (const id of [TINY, GEMMA]) {
  describe(`batched rows on ${id}`, () => {
    let lm: LanguageModel;
    beforeAll(async () => {
      if (!existsSync(join(GENERATED, id, 'onnx', 'model.onnx'))) throw new Error(`${id} is not at ${GENERATED}: run \`npm run models\``);
      lm = (await loadEngine(GENERATED, id)).languageModel!;
    }, 300_000);
    afterAll(async () => {
      await lm?.dispose();
    });

    it('the probe says the graph computes rows exactly, and its passes are not counted', async () => {
      const fed = lm.tokensFed;
      expect(await lm.rowsExact()).toBe(true);
      expect(lm.tokensFed).toBe(fed);
    });

    it('rows of 2, 5 and 20 tokens advanced 4 steps (the middle row dropped after 2) equal each sequence read whole', async () => {
      const live = lm.ledger.live;
      const seqs = [
        [11, 12],
        [21, 22, 23, 24, 25],
        Array.from({ length: 20 }, (_, i) => 31 + i), // past Gemma 3's 16-token window: a gap inside it would move keys out of it
      ];
      const next = [
        [40, 41, 42, 43],
        [50, 51],
        [60, 61, 62, 63],
      ];
      const caches = await cachesOf(lm, seqs);
      let rows: CacheRows = stackRows(caches)!;
      expect(rows).not.toBeNull();
      for (const c of caches) c.dispose();
      let open = [0, 1, 2];
      for (let step = 0; step < 4; step++) {
        const ids = open.map((r) => next[r]![step]!);
        const pass = await lm.forwardRows(ids, rows);
        rows.cache.dispose();
        rows = pass.rows;
        for (const [row, r] of open.entries()) {
          const got = LanguageModel.rowLogProbs(pass.logits, row);
          const want = await referenceLogProbs(lm, [...seqs[r]!, ...next[r]!.slice(0, step + 1)]);
          expect(maxDiff(got, want), `row ${r} step ${step}`).toBeLessThan(1e-4);
        }
        pass.logits.dispose();
        if (step === 1) {
          // The rows kept in place (keepRows) hold what a copy of them holds (selectRows), in the same memory.
          const copy = selectRows(rows, [0, 2]);
          const buffers = Object.values(rows.cache.tensors).map((t) => (t.data as Float32Array).buffer);
          rows = keepRows(rows, [0, 2]);
          for (const [name, t] of Object.entries(rows.cache.tensors)) {
            expect(t.dims, name).toEqual(copy.cache.tensors[name]!.dims);
            expect(maxDiff(t.data as Float32Array, copy.cache.tensors[name]!.data as Float32Array), name).toBe(0);
          }
          expect(Object.values(rows.cache.tensors).map((t) => (t.data as Float32Array).buffer)).toEqual(buffers);
          expect(rows.mask).toEqual(copy.mask);
          copy.cache.dispose();
          open = [0, 2];
          expect(rows.positions).toEqual([seqs[0]!.length + 2, seqs[2]!.length + 2]);
        }
      }
      expect(rows.cache.length).toBe(20 + 4);
      expect([...rows.mask[0]!]).toEqual([...Array(18).fill(0), ...Array(6).fill(1)]);
      rows.cache.dispose();
      expect(lm.ledger.live).toBe(live);
    });

    it('an extraction decodes its fields as rows: one pass a step for all of them, the answers each field gets alone, nothing leaked', async () => {
      const request = parseExtractionRequest(BODY);
      const live = lm.ledger.live;
      const calls = lm.forwardCalls;
      const together = await extract(lm, request, { prefixes: null });
      const passes = lm.forwardCalls - calls;
      expect(lm.ledger.live).toBe(live);
      const traces = Object.values(together.traces);
      const valueSteps = traces.map((t) => t.decoded.fed - t.plan.promptIds.length - (t.plan.nullPath.length > 1 ? t.plan.nullPath.length - 1 : 0));
      const ownPasses = traces.reduce((n, t) => n + 1 + (t.plan.nullPath.length > 1 ? 1 : 0), 0);
      // The state's pass, each field's prompt and null row, and one pass per step of the longest value.
      expect(passes).toBe(1 + ownPasses + Math.max(...valueSteps));
      expect(Math.max(...valueSteps)).toBeLessThan(valueSteps.reduce((a, b) => a + b, 0));
      await expectEachAlone(lm, BODY, together.response.answers);
    }, 120_000);

    it(`more fields than a batch holds (${ROWS_MAX}) join the rows as rows finish: the answers each field gets alone, nothing leaked`, async () => {
      const kinds = Object.values(BODY.fields);
      const fields = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`f${i}`, { ...kinds[i % kinds.length]!, instructions: `Field ${i}.` }]));
      const body = { ...BODY, fields };
      await lm.rowsExact(); // its probe's pass is not the extraction's
      const live = lm.ledger.live;
      const { result: together, widths } = await withRowWidths(lm, () => extract(lm, parseExtractionRequest(body), { prefixes: null }));
      expect(lm.ledger.live).toBe(live);
      expect(Math.max(...widths)).toBeLessThanOrEqual(ROWS_MAX);
      // Fields joined the batch as rows finished: fewer steps than batches of ROWS_MAX fields, one
      // after the other, would take (each as many as its longest value).
      const steps = Object.keys(fields).map((k) => {
        const t = together.traces[k]!;
        return t.decoded.fed - t.plan.promptIds.length - (t.plan.nullPath.length > 1 ? t.plan.nullPath.length - 1 : 0);
      });
      let batches = 0;
      for (let k = 0; k < steps.length; k += ROWS_MAX) batches += Math.max(...steps.slice(k, k + ROWS_MAX));
      expect(widths.length, `${widths.join(' ')} against batches of ${ROWS_MAX}: ${steps.join(' ')}`).toBeLessThan(batches);
      await expectEachAlone(lm, body, together.response.answers);
    }, 180_000);
  });
}

describe(`a GroupQueryAttention graph (${GQA})`, () => {
  let lm: LanguageModel;
  beforeAll(async () => {
    if (!existsSync(join(GENERATED, GQA, 'onnx', 'model.onnx'))) throw new Error(`${GQA} is not at ${GENERATED}: run \`npm run models\``);
    lm = (await loadEngine(GENERATED, GQA)).languageModel!;
  }, 300_000);
  afterAll(async () => {
    await lm?.dispose();
  });

  it('is found out by the probe (seqlens_k counts positions, the gap is read), and its fields decode alone, one pass per value token', async () => {
    expect(await lm.rowsExact()).toBe(false);
    const calls = lm.forwardCalls;
    const together = await extract(lm, parseExtractionRequest(BODY), { prefixes: null });
    const traces = Object.values(together.traces);
    expect(lm.forwardCalls - calls).toBe(1 + traces.reduce((n, t) => n + 1 + (t.plan.nullPath.length > 1 ? 1 : 0), 0) + traces.reduce((n, t) => n + t.decoded.fed - t.plan.promptIds.length - (t.plan.nullPath.length > 1 ? t.plan.nullPath.length - 1 : 0), 0));
  }, 120_000);
});
