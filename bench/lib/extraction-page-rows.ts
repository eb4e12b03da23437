/**
 * The `extraction` rows in the page (docs/extraction.md, Cost): the same requests as the Node rows
 * (extraction-rows.ts), through the engine in the bench page's worker, in its own Chromium, on the
 * 135M-shaped model at fp32 on wasm, with the threads the page gets. There each pass's key/value
 * cache stays in onnxruntime-web's memory (runtime/resident-outputs.ts, in a cross-origin isolated
 * page), where onnxruntime-node copies every layer's cache out of and into JavaScript at every pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import type { ExtractionResponse } from '../../src/contract/index.ts';
import { chromiumPath } from '../peers/browser.ts';
import { openPage } from './bench-page.ts';
import { fieldRows } from './extraction-rows.ts';
import { SMOL } from './plan.ts';
import type { ExtractionRow } from './schema-feature-rows.ts';

export async function measureExtractionPage(site: string, mirror: ModelHost, threads: number | undefined, reps: number, log: (...a: unknown[]) => void): Promise<{ rows: ExtractionRow[]; threads: number | null; isolated: boolean }> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-extraction-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    const p = await openPage(ctx, site, log);
    const info = await p.call<{ crossOriginIsolated: boolean }>('info');
    const loaded = await p.call<{ wasmThreads: number | null }>('load', { model: SMOL, host: mirror.url, device: 'wasm', dtype: 'fp32', threads });
    log(`extraction in the page: ${SMOL} fp32 on wasm, ${loaded.wasmThreads ?? '?'} threads, cross-origin isolated ${info.crossOriginIsolated}`);
    const rows = await fieldRows(
      {
        extract: (body) => p.call<{ ms: number; response: ExtractionResponse }>('extractionTimed', body),
        clear: () => p.call('clearPrefixCache'),
      },
      reps,
      log,
      'page',
    );
    await p.call('dispose');
    await p.close();
    return { rows, threads: loaded.wasmThreads, isolated: info.crossOriginIsolated };
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}
