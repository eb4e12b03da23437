import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Tensor } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { floatsOf } from '../../src/engine/runtime/float16.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { passAgreement, passLimit } from '../../src/engine/load/load-model.ts';
import { GENERATED, loadEngine, TINY } from '../support/models.ts';

/**
 * Long inputs fed in passes of at most `maxPassTokens` (what the engine does where a backend
 * computes a long pass wrongly: onnxruntime-web's WebGPU GroupQueryAttention with 32 or more new
 * tokens) give the same logits rows and the same cache as one pass, in float32 and in float16;
 * and the load-time check that sets the limit finds a backend that goes wrong past 31 tokens.
 */

const GQA = `${TINY}-gqa`;

/**
 * Runs `body` while the model computes every pass of 32 or more tokens wrongly, as the WebGPU
 * kernel does: the right shape, wrong numbers.
 */
async function withLongPassesCorrupted<T>(lm: LanguageModel, body: () => Promise<T>): Promise<T> {
  const model = lm.model as unknown as { forward(inputs: Record<string, Tensor>): Promise<Record<string, Tensor>> };
  const original = model.forward.bind(model);
  model.forward = async (inputs) => {
    const out = await original(inputs);
    if (inputs['input_ids']!.dims.at(-1)! >= 32) {
      const data = out['logits']!.data as Float32Array | Uint16Array;
      for (let i = 0; i < data.length; i += 3) data[i] = data[i + 1]!;
    }
    return out;
  };
  try {
    return await body();
  } finally {
    model.forward = original;
  }
}
const IDS = Array.from({ length: 40 }, (_, i) => 1 + ((i * 37) % 1000));

function rows(t: Tensor): number[][] {
  const v = t.dims.at(-1)!;
  const n = t.dims.at(-2)!;
  return Array.from({ length: n }, (_, r) => Array.from(floatsOf(t, r * v, v)));
}

function maxDiff(a: number[][], b: number[][]): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  a.forEach((row, r) => row.forEach((x, i) => (m = Math.max(m, Math.abs(x - b[r]![i]!)))));
  return m;
}

for (const [model, dtype, tol] of [
  [TINY, 'fp32', 1e-4],
  [GQA, 'fp16', 0.05],
] as const) {
  describe.skipIf(!existsSync(join(GENERATED, model, 'onnx')))(`passes of at most N tokens: ${model} ${dtype}`, () => {
    let lm: LanguageModel;
    beforeAll(async () => {
      lm = (await loadEngine(GENERATED, model, dtype)).languageModel!;
    });
    afterAll(async () => {
      await lm?.dispose();
    });

    async function run(limit: number | null, keep: number, prefix = 0) {
      lm.maxPassTokens = null;
      const empty = lm.emptyCache();
      const head = prefix > 0 ? await lm.forward(IDS.slice(0, prefix), empty, 1) : null;
      head?.logits.dispose();
      const past = head?.cache ?? empty;
      lm.maxPassTokens = limit;
      const calls = lm.forwardCalls;
      const fed = lm.tokensFed;
      const out = await lm.forward(IDS.slice(prefix), past, keep);
      const passes = lm.forwardCalls - calls;
      expect(lm.tokensFed - fed).toBe(IDS.length - prefix);
      lm.maxPassTokens = null;
      // The last `keep` rows (a model without num_logits_to_keep returns every row of its pass).
      const all = rows(out.logits);
      expect(all.length).toBeGreaterThanOrEqual(keep === 0 ? IDS.length - prefix : keep);
      const r = { logits: keep === 0 ? all : all.slice(-keep), type: out.logits.type, length: out.cache.length, passes, kv: Object.values(out.cache.tensors).map((t) => Array.from(floatsOf(t))) };
      out.logits.dispose();
      out.cache.dispose();
      past.dispose();
      empty.dispose();
      return r;
    }

    it('gives the rows and the cache of one pass, for every keep, from an empty cache and after a prefix', async () => {
      const live = lm.ledger.live;
      for (const prefix of [0, 3]) {
        for (const keep of [0, 1, 4, 12]) {
          const one = await run(null, keep, prefix);
          const split = await run(7, keep, prefix);
          expect(one.passes).toBe(1);
          expect(split.passes).toBe(Math.ceil((IDS.length - prefix) / 7));
          expect(split.type).toBe(one.type);
          expect(split.length).toBe(one.length);
          expect(maxDiff(split.logits, one.logits), `keep ${keep} prefix ${prefix}`).toBeLessThanOrEqual(tol);
          expect(maxDiff(split.kv, one.kv)).toBeLessThanOrEqual(tol);
        }
      }
      expect(lm.ledger.live).toBe(live);
    });

    it('the load-time check finds no limit where one pass is right (onnxruntime-node)', async () => {
      const calls = lm.forwardCalls;
      expect(await passLimit(lm)).toBeNull();
      expect(lm.forwardCalls).toBe(calls);
    });

    it('the load-time check finds a backend that goes wrong on passes of 32 tokens or more', async () => {
      expect(await withLongPassesCorrupted(lm, () => passLimit(lm))).toBe(31);
    });
  });
}

/**
 * The hub-style q8 quantizes each pass's activations with that pass's own scale, so a split pass
 * differs from one pass by design; the check holds q8 to a wider bound, so it does not split a
 * q8 graph for nothing, and still finds a backend that computes long passes wrongly.
 */
describe.skipIf(!existsSync(join(GENERATED, TINY, 'onnx', 'model_quantized.onnx')))(`the load-time check on q8: ${TINY}`, () => {
  let lm: LanguageModel;
  beforeAll(async () => {
    lm = (await loadEngine(GENERATED, TINY, 'q8')).languageModel!;
  });
  afterAll(async () => {
    await lm?.dispose();
  });

  it('holds q8 to a wider bound than the other formats', () => {
    expect(passAgreement('q8')).toBeGreaterThan(passAgreement('fp32'));
    for (const d of ['fp32', 'fp16', 'q4', 'q4f16'] as const) expect(passAgreement(d)).toBe(0.25);
  });

  it('keeps single passes where only the activation rounding differs, and finds a backend gone wrong', async () => {
    expect(await passLimit(lm)).toBeNull();
    expect(await withLongPassesCorrupted(lm, () => passLimit(lm))).toBe(31);
  });
});
