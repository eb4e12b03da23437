/**
 * Rows written in place (LanguageModel.forwardRows over rows with room, model/kv-rows.ts, on
 * onnxruntime-node sessions given step outputs by server/node-session-rewrites.ts): each pass
 * fetches the logits and the keys and values it adds, and writes them into the rows' room, where a
 * pass otherwise returns the whole cache as a new copy. Checked against independent computations:
 * every row's distribution against the whole sequence read in one pass by the export as it is (a
 * second engine, without the rewrites), through the room running out and the rows being stacked
 * again; an extraction's answers against each field asked alone; the passes counted; nothing leaked.
 * Where attention has a sliding window (Gemma 3) the rows are not written in place.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseExtractionRequest } from '../../src/contract/index.ts';
import { extract } from '../../src/engine/extraction/extract.ts';
import { keepRows, stackRows, type CacheRows } from '../../src/engine/model/kv-rows.ts';
import { LanguageModel } from '../../src/engine/model/language-model.ts';
import { withNodeRewrites } from '../../src/server/node-session-rewrites.ts';
import { GENERATED, loadEngine, TINY } from '../support/models.ts';
import { referenceLogProbs } from '../support/reference.ts';
import { cachesOf, expectEachAlone, withRowWidths } from '../support/batched-rows.ts';

const GEMMA = 'tiny-random-gemma3';

const load = (id: string) => withNodeRewrites(ort.InferenceSession as never, () => loadEngine(GENERATED, id));

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}

describe(`rows written in place on ${TINY}`, () => {
  let lm: LanguageModel;
  let plain: LanguageModel;
  beforeAll(async () => {
    if (!existsSync(join(GENERATED, TINY, 'onnx', 'model.onnx'))) throw new Error(`${TINY} is not at ${GENERATED}: run \`npm run models\``);
    lm = (await load(TINY)).languageModel!;
    plain = (await loadEngine(GENERATED, TINY)).languageModel!;
  }, 300_000);
  afterAll(async () => {
    await lm?.dispose();
    await plain?.dispose();
  });

  it('only where the session has step outputs', () => {
    expect(lm.inPlaceRows).toBe(true);
    expect(plain.inPlaceRows).toBe(false);
  });

  it('rows with 2 positions of room, advanced 6 steps (the room used up and stacked again, a row dropped), equal each sequence read whole by the export', async () => {
    const live = lm.ledger.live;
    const seqs = [[11, 12], [21, 22, 23, 24, 25], Array.from({ length: 9 }, (_, i) => 31 + i)];
    const next = [
      [40, 41, 42, 43, 44, 45],
      [50, 51],
      [60, 61, 62, 63, 64, 65],
    ];
    const caches = await cachesOf(lm, seqs);
    let rows: CacheRows = stackRows(caches, null, 2)!;
    for (const c of caches) c.dispose();
    expect([rows.used, rows.cache.length]).toEqual([9, 11]);
    expect([...rows.mask[0]!]).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]);
    let open = [0, 1, 2];
    let inPlace = 0;
    let restacked = 0;
    for (let step = 0; step < 6; step++) {
      if (rows.used === rows.cache.length) {
        const roomier = stackRows([], rows, 2)!;
        rows.cache.dispose();
        rows = roomier;
        restacked++;
      }
      const before = lm.inPlacePasses;
      const pass = await lm.forwardRows(
        open.map((r) => next[r]![step]!),
        rows,
      );
      expect(lm.inPlacePasses - before).toBe(1);
      expect(pass.rows.cache).toBe(rows.cache); // written in place: the same tensors
      inPlace++;
      rows = pass.rows;
      for (const [row, r] of open.entries()) {
        const got = LanguageModel.rowLogProbs(pass.logits, row);
        const want = await referenceLogProbs(plain, [...seqs[r]!, ...next[r]!.slice(0, step + 1)]);
        expect(maxDiff(got, want), `row ${r} step ${step}`).toBeLessThan(1e-4);
      }
      pass.logits.dispose();
      if (step === 1) {
        rows = keepRows(rows, [0, 2]);
        open = [0, 2];
      }
    }
    expect([inPlace, restacked]).toEqual([6, 2]);
    expect(rows.positions).toEqual([seqs[0]!.length + 6, seqs[2]!.length + 6]);
    // Stacked again before steps 2 and 4, each time with 2 positions of room, all filled since.
    expect([rows.used, rows.cache.length]).toEqual([15, 15]);
    expect([...rows.mask[0]!]).toEqual([...Array(7).fill(0), ...Array(8).fill(1)]);
    expect([...rows.mask[1]!]).toEqual(Array(15).fill(1));
    rows.cache.dispose();
    expect(lm.ledger.live).toBe(live);
  });

  it('an extraction of 14 fields writes its rows in place: the answers each field gets alone, nothing leaked', async () => {
    const kinds = [{ type: 'text' }, { type: 'number', decimals: 2 }, { type: 'date' }, { type: 'time' }, { type: 'text', instructions: 'Any note?' }];
    const body = {
      model: 'jev',
      state: [{ type: 'text', text: 'Invoice INV-7 from Acme Ltd, total 1,234.50 EUR, due 2024-02-29, call at 14:30.' }],
      fields: Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`f${i}`, { ...kinds[i % kinds.length]!, instructions: `Field ${i}.` }])),
    };
    await lm.rowsExact();
    const live = lm.ledger.live;
    const before = lm.inPlacePasses;
    const { result: together, widths } = await withRowWidths(lm, () => extract(lm, parseExtractionRequest(body), { prefixes: null }));
    expect(lm.ledger.live).toBe(live);
    // Every batched step (rows whose room is used up are stacked again with ROWS_ROOM more first).
    expect(widths.length).toBeGreaterThan(0);
    expect(lm.inPlacePasses - before).toBe(widths.length);
    await expectEachAlone(plain, body, together.response.answers);
  }, 240_000);
});

describe(`a sliding window (${GEMMA})`, () => {
  it('is not written in place, though its session has step outputs: the room would lie inside the window', async () => {
    if (!existsSync(join(GENERATED, GEMMA, 'onnx', 'model.onnx'))) throw new Error(`${GEMMA} is not at ${GENERATED}: run \`npm run models\``);
    const lm = (await load(GEMMA)).languageModel!;
    try {
      const session = (lm.model as unknown as { sessions: Record<string, { outputNames: string[] }> }).sessions['model']!;
      expect(session.outputNames.some((n) => n.startsWith('jev_step/'))).toBe(true);
      expect(lm.inPlaceRows).toBe(false);
    } finally {
      await lm.dispose();
    }
  }, 300_000);
});
