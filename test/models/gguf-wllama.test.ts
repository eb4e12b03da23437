/**
 * llama.cpp agrees with this engine on the same weights: wllama 3.8.1 on the GGUF and the engine
 * (transformers.js + onnxruntime-web) on the ONNX file, in one headless Chromium page
 * (bench/peers/check-wllama.ts): same token count for every test string, same next-token top-k,
 * 24 identical greedy tokens, log-probs within 1e-3 (flash attention off, f32 KV cache).
 * Skipped where no Chromium is installed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchTestChromium } from '../../bench/peers/browser.ts';
import { DEFAULT_BOUND, checkModels, summarize } from '../../bench/peers/check-wllama.ts';
import { generateModels } from '../../scripts/models/generate-models.ts';


let browser: Browser;
/** The peers page's folder, this file's own: vitest's other fork may be building its copy at the same time. */
let dist: string;

describe.skipIf(!hasChromium())('wllama (llama.cpp) vs the engine on the same weights', () => {
  beforeAll(async () => {
    dist = mkdtempSync(join(tmpdir(), 'jev-peers-'));
    await generateModels({ only: 'tiny' });
    browser = await launchTestChromium();
  });
  afterAll(async () => {
    await browser?.close();
    if (dist) rmSync(dist, { recursive: true, force: true });
  });

  it(`agrees on tokenization, greedy tokens and log-probs (within ${DEFAULT_BOUND})`, async () => {
    const models = ['tiny-random-llama', 'TinyStories-656K'];
    const results = await checkModels(browser, models, { build: true, dist, steps: 24 });
    for (const r of results) {
      console.log(summarize(r));
      expect(r.tokenization.every((t) => t.agree), `${r.model} tokenization`).toBe(true);
      expect(r.greedy.prompt_tokens.engine).toBe(r.greedy.prompt_tokens.wllama);
      expect(r.greedy.identical, `${r.model} greedy tokens`).toBe(true);
      expect(r.greedy.compared_top).toBeGreaterThan(0);
      expect(r.greedy.max_abs_dlogprob_top).toBeLessThanOrEqual(DEFAULT_BOUND);
      expect(r.pass).toBe(true);
    }
  }, 300_000);
});
