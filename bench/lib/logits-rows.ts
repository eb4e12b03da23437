/**
 * Memory rows for the bound on all-position logits (LanguageModel.logitsBudgetBytes), on a model
 * with Qwen's 151,936-token vocabulary (generated, tiny width, so the logits dominate): the peak
 * renderer RSS of one decision on a 512-token state with the bound and without it, each in a
 * browser of its own (a fresh profile), so that one does not count the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import { chromiumPath } from '../peers/browser.ts';
import { openPage } from './bench-page.ts';
import { modelBytes } from './model-bytes.ts';
import { ProcessSampler } from '../../scripts/machine/procs.ts';
import type { MemoryResult } from './schema.ts';

export const BIG_VOCABULARY_MODEL = 'tiny-random-qwen2';
const STATE_TOKENS = 512;

export async function measureLogitsBound(site: string, mirror: ModelHost, modelRoots: readonly string[], threads: number | undefined, log: (...a: unknown[]) => void): Promise<MemoryResult[]> {
  const rows: MemoryResult[] = [];
  for (const bounded of [true, false]) {
    const profile = mkdtempSync(join(tmpdir(), 'jev-bench-logits-'));
    const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
    const sampler = new ProcessSampler(profile);
    sampler.start();
    try {
      const p = await openPage(ctx, site, log);
      await p.call('load', { model: BIG_VOCABULARY_MODEL, host: mirror.url, device: 'wasm', dtype: 'fp32', threads });
      const bound = await p.call<{ budget: number | null; passTokens: number | null }>('logitsBound', !bounded);
      const setup = await p.call<{ stateTokens: number; prefixTokens: number }>('setupDecisions', 'big', STATE_TOKENS, 4242);
      await p.call('takeLogitsPeak');
      await p.heap.sample();
      p.heap.mark();
      sampler.mark();
      await p.call('engineDecision', 'big', 4);
      await p.heap.sample();
      const heap = p.heap.mark();
      const peaks = sampler.mark();
      const logits = await p.call<number>('takeLogitsPeak');
      rows.push({
        device: 'wasm',
        model: BIG_VOCABULARY_MODEL,
        dtype: 'fp32',
        phase: 'decisions',
        model_bytes: modelBytes(modelRoots, BIG_VOCABULARY_MODEL, 'fp32'),
        renderer_peak_rss_bytes: peaks.rendererRss,
        browser_tree_peak_rss_bytes: peaks.treeRss,
        worker_js_heap_peak_bytes: heap?.heap ?? null,
        worker_array_buffers_peak_bytes: heap?.buffers ?? null,
        gpu_buffer_peak_bytes: null,
        state_tokens: setup.stateTokens,
        logits_budget_bytes: bound.budget,
        pass_tokens: bound.passTokens,
        logits_peak_bytes: logits,
      });
      log(
        `${BIG_VOCABULARY_MODEL} S=${setup.stateTokens} (${setup.prefixTokens} prompt tokens), ${bounded ? `logits bound: passes of ≤ ${bound.passTokens} tokens` : 'no logits bound'}: ` +
          `largest logits ${(logits / 2 ** 20).toFixed(0)} MiB, renderer peak ${(peaks.rendererRss / 2 ** 20).toFixed(0)} MiB`,
      );
      await p.call('dispose');
      await p.close();
    } finally {
      sampler.stop();
      await ctx.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    }
  }
  return rows;
}
