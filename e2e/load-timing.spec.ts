import { expect, test, type Page } from '@playwright/test';
import { MIRROR } from './support/env.ts';

/**
 * `status().lastLoad` in Chromium (src/engine/load/load-timing.ts; docs/benchmarks.md, "Where a load
 * goes"): a first load names every phase, its phases add up to its total, its bytes came from the
 * mirror; the same model loaded again after a reload comes from the browser's cache (no download,
 * its files read and their SHA-256 checked); the Model panel shows it.
 */
const MODEL = 'tiny-random-llama';
const PHASES = ['integrity', 'storageRead', 'download', 'wasm', 'rewrites', 'session', 'firstPass', 'tokenizer', 'other'];
const q = () => `/?${new URLSearchParams({ model: MODEL, host: MIRROR, device: 'wasm', dtype: 'fp32' })}`;

async function ready(page: Page): Promise<any> {
  await page.waitForFunction(() => !!(window as any).jev);
  return page.evaluate(() => (window as any).jev.ready);
}

function expectWhole(last: any) {
  expect(Object.keys(last.phases).sort()).toEqual([...PHASES].sort());
  const sum = Object.values(last.phases as Record<string, number>).reduce((a, b) => a + b, 0);
  expect(Math.abs(sum - last.totalMs)).toBeLessThanOrEqual(1);
  expect(last.totalMs).toBeGreaterThan(0);
  expect(last.phases.session).toBeGreaterThan(0);
  expect(last.phases.tokenizer).toBeGreaterThan(0);
  expect(last.phases.firstPass).toBeGreaterThan(0);
  for (const p of PHASES.filter((p) => p !== 'other')) expect(last.running[p]).toBeGreaterThanOrEqual(last.phases[p]);
}

test('status().lastLoad: every phase, adding up to the total; a return visit reads the cache, not the network; the panel shows it', async ({ page }) => {
  await page.goto(q());
  const first = (await ready(page)).lastLoad;
  expectWhole(first);
  expect(first.fromCache).toBe(false);
  expect(first.bytesFetched).toBeGreaterThan(100_000);
  expect(first.phases.download).toBeGreaterThan(0);
  // onnxruntime's module, compiled in this fresh worker while the files download (runtime-warm-up.ts):
  // its own length in `running`; in `phases` only what the download did not cover, which may be nothing.
  expect(first.running.wasm).toBeGreaterThan(0);
  expect(first.phases.wasm).toBeLessThanOrEqual(first.running.wasm);

  await page.reload();
  const again = (await ready(page)).lastLoad;
  expectWhole(again);
  expect(again).toMatchObject({ fromCache: true, bytesFetched: 0 });
  expect(again.phases.download).toBe(0);
  expect(again.phases.storageRead).toBeGreaterThan(0);
  expect(again.phases.integrity).toBeGreaterThan(0);

  const facts = page.getByTestId('load-facts');
  await expect(facts).toBeVisible();
  await expect(facts).toHaveAttribute('data-from-cache', 'true');
  await expect(facts.locator('[data-phase="session"]')).toBeVisible();
  await expect(facts).toContainText('Loaded in');
});
