import { expect, test, type Page } from '@playwright/test';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED, MIRROR } from './support/env.ts';

/**
 * External data: tiny-random-llama's fp16 export keeps its weights in onnx/model_fp16.onnx_data,
 * declared by config.json's transformers.js_config.use_external_data_format. The engine fetches
 * it, the integrity cache verifies it, the offline reload serves it, and the cache view lists and
 * deletes it with its size.
 */
const MODEL = 'tiny-random-llama';
const URL_ = `/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp16`;
const DATA = 'onnx/model_fp16.onnx_data';
const DATA_URL = `${MIRROR}/${MODEL}/resolve/main/${DATA}`;
const DECISION = { model: 'jev', state: 'The parcel arrived broken.', questions: { refund: { type: 'noul', instructions: 'Does the customer want money back?' } } };

async function ready(page: Page) {
  await page.waitForLoadState('load');
  await page.waitForFunction(() => !!navigator.serviceWorker?.controller && !!(window as any).jev);
  return page.evaluate(() => (window as any).jev.ready);
}

const decide = (page: Page) => page.evaluate((d) => (window as any).jev.decisions.create(d), DECISION);

test('an fp16 model with external data loads; its _data file is cached, listed with its size, and deleted from the cache view', async ({ page }) => {
  const fetched: string[] = [];
  page.on('request', (r) => fetched.push(r.url()));
  await page.goto(URL_);
  const status = await ready(page);
  expect(status).toMatchObject({ state: 'ready', dtype: 'fp16', device: 'wasm' });
  expect(fetched).toContain(DATA_URL);
  const answer = await decide(page);
  expect(answer.answers.refund.type).toBe('noul');

  const cache = page.getByTestId('cache-status');
  await expect(cache).toContainText('stored in this browser');
  await cache.getByText('Stored files').click();
  const row = cache.locator(`[data-testid="cached-file"][data-file="${DATA}"]`);
  await expect(row).toHaveCount(1);
  const bytes = statSync(join(GENERATED, MODEL, DATA)).size;
  await expect(row).toHaveAttribute('data-bytes', String(bytes));
  await cache.getByRole('button', { name: `Delete ${MODEL} from the cache` }).click();
  await expect(cache.getByRole('status')).toContainText('Deleted');
  await expect(cache).toHaveAttribute('data-files', '0');
  const left = await page.evaluate(async () => (await (await caches.open('transformers-cache')).keys()).map((r) => r.url));
  expect(left.filter((u) => u.includes('_data'))).toEqual([]);
});

test('a corrupted cached _data entry is dropped and fetched again; the answers stay the same', async ({ page }) => {
  await page.goto(URL_);
  await ready(page);
  const before = await decide(page);
  await page.evaluate(async (key) => {
    const cache = await caches.open('transformers-cache');
    const hit = (await cache.match(key))!;
    const bytes = new Uint8Array(await hit.arrayBuffer());
    for (let i = 0; i < 1024; i++) bytes[bytes.length - 1 - i] = bytes[bytes.length - 1 - i]! ^ 0xff;
    // The recorded size and SHA-256 stay: only the bytes changed.
    await cache.put(key, new Response(bytes, { headers: hit.headers }));
  }, DATA_URL);
  const fetched: string[] = [];
  page.on('request', (r) => fetched.push(r.url()));
  await page.reload();
  await ready(page);
  expect(fetched.filter((u) => u === DATA_URL).length).toBeGreaterThanOrEqual(1);
  expect((await decide(page)).answers).toEqual(before.answers);
});

test('offline, the reload of an external-data model is served from the cache', async ({ context, page }) => {
  await page.goto(URL_);
  await ready(page);
  const online = await decide(page);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await context.setOffline(true);
  await page.reload();
  const status = await ready(page);
  expect(status).toMatchObject({ state: 'ready', dtype: 'fp16' });
  expect((await decide(page)).answers).toEqual(online.answers);
});

test('offline with dtype auto, a format that is stored loads; one that is not counts as not offered', async ({ context, page }) => {
  // Online, load fp32 only: the other formats are never stored.
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  await ready(page);
  const online = await decide(page);
  await page.evaluate(() => navigator.serviceWorker.ready);
  await context.setOffline(true);
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=auto`);
  const status = await ready(page);
  expect(status).toMatchObject({ state: 'ready', dtype: 'fp32', device: 'wasm' });
  expect((await decide(page)).answers).toEqual(online.answers);
});
