/**
 * llama.cpp agrees with this engine on the same QUANTIZED weights: wllama 3.8.1 on
 * gguf/model-q4_0.gguf and gguf/model-q8_0.gguf (scripts/models/gguf-quant.ts: exactly the ONNX
 * files' nibbles / int8 values and scales, gguf-quant.test.ts) against the engine on
 * onnx/model_q4.onnx and onnx/model_quantized.onnx, in one headless Chromium page
 * (bench/peers/check-wllama.ts): same token counts for every test string, 24 greedy tokens
 * identical or parting only where the engine's own top two were within the bound, log-probs of the
 * top-10 within the measured bound of each dtype (QUANT_BOUNDS: the two runtimes round the
 * activations differently). Skipped where no Chromium is installed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchTestChromium } from '../../bench/peers/browser.ts';
import { QUANT_BOUNDS, checkModels, summarize } from '../../bench/peers/check-wllama.ts';
import { generateModels } from '../../scripts/models/generate-models.ts';


let browser: Browser;
/** The peers page's folder, this file's own: vitest's other fork may be building its copy at the same time. */
let dist: string;

describe.skipIf(!hasChromium())('wllama (llama.cpp) vs the engine on the same quantized weights', () => {
  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'jev-peers-'));
    await generateModels({ only: 'tiny' });
    browser = await launchTestChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (dist) rmSync(dist, { recursive: true, force: true });
  });

  it(`q4 (Q4_0) within ${QUANT_BOUNDS.q4} and q8 (Q8_0) within ${QUANT_BOUNDS.q8} in log-prob, same greedy tokens`, async () => {
    const results = await checkModels(browser, ['tiny-random-llama'], { build: true, dist, steps: 24, dtypes: ['q4', 'q8'] });
    expect(results.map((r) => r.dtype)).toEqual(['q4', 'q8']);
    for (const r of results) {
      console.log(summarize(r));
      expect(r.bound).toBe(QUANT_BOUNDS[r.dtype]);
      expect(r.tokenization.every((t) => t.engine_tokens === t.wllama_tokens), `${r.dtype} token counts`).toBe(true);
      expect(r.tokenization.every((t) => t.agree), `${r.dtype} tokenization`).toBe(true);
      expect(r.greedy.prompt_tokens.engine).toBe(r.greedy.prompt_tokens.wllama);
      // Identical, or parted where the engine's top two were closer than the bound (a tie the two roundings can break apart).
      if (!r.greedy.identical) expect(r.greedy.gap_at_mismatch, `${r.dtype} greedy tokens part only at a near-tie`).toBeLessThanOrEqual(r.bound);
      expect(r.greedy.compared_top).toBeGreaterThan(0);
      expect(r.greedy.max_abs_dlogprob_top).toBeLessThanOrEqual(r.bound);
      // quantized on both sides, yet not bit-equal: the activations are rounded differently
      expect(r.greedy.max_abs_dlogprob_top).toBeGreaterThan(1e-4);
      expect(r.pass).toBe(true);
    }
  }, 300_000);
});
