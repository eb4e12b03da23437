/** The batched rows' tests' helpers (test/engine/extraction-rows.test.ts, in-place-rows.test.ts). */
import { expect } from 'vitest';
import { parseExtractionRequest, type ExtractionAnswer } from '../../src/contract/index.ts';
import { extract } from '../../src/engine/extraction/extract.ts';
import type { KvCache } from '../../src/engine/model/kv-cache.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';

/** Each field's answer among the others (`together`) is the one it gets asked alone of `lm`: its value exactly, `pNull` and `confidence` within 1e-5. */
export async function expectEachAlone(lm: LanguageModel, body: { fields: Record<string, unknown> }, together: Record<string, ExtractionAnswer>): Promise<void> {
  for (const [key, field] of Object.entries(body.fields)) {
    const alone = await extract(lm, parseExtractionRequest({ ...body, fields: { [key]: field } }), { prefixes: null });
    const a = alone.response.answers[key]!;
    const b = together[key]!;
    expect(b.type, key).toBe(a.type);
    if (a.type === 'refusal' || b.type === 'refusal') continue;
    expect(b.guess, key).toEqual(a.guess);
    expect(Math.abs(b.pNull - a.pNull), key).toBeLessThan(1e-5);
    expect(Math.abs(b.confidence - a.confidence), key).toBeLessThan(1e-5);
  }
}

/** `run` with every `lm.forwardRows` call's width (its rows) recorded, in order. */
export async function withRowWidths<T>(lm: LanguageModel, run: () => Promise<T>): Promise<{ result: T; widths: number[] }> {
  const widths: number[] = [];
  const forwardRows = lm.forwardRows.bind(lm);
  lm.forwardRows = (ids, rows) => {
    widths.push(ids.length);
    return forwardRows(ids, rows);
  };
  try {
    return { result: await run(), widths };
  } finally {
    lm.forwardRows = forwardRows;
  }
}

/** The cache of each sequence read from an empty cache, one pass each (the caller disposes them). */
export async function cachesOf(lm: LanguageModel, seqs: readonly (readonly number[])[]): Promise<KvCache[]> {
  const empty = lm.emptyCache();
  const caches = [];
  try {
    for (const s of seqs) {
      const first = await lm.forward(s, empty, 1);
      first.logits.dispose();
      caches.push(first.cache);
    }
  } finally {
    empty.dispose();
  }
  return caches;
}
