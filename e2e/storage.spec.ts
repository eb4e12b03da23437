import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { GENERATED, MIRROR } from './support/env.ts';
import { startModelHost, type ModelHost } from './support/model-host.ts';

/**
 * Storage that survives (docs/offline.md, "Storage that survives"), in Chromium: where the browser
 * will not store the model (the quota forced small through the DevTools Protocol; a context that
 * keeps no profile, as Playwright's contexts and Incognito windows are), the model loads and answers
 * from memory and says why it is not stored; a download cut off halfway is resumed after a reload
 * from the byte reached, with `Range`, and the answers are those of the model served whole.
 */
const MODEL = 'tiny-random-llama';
const FILE = `${MODEL}/onnx/model.onnx`;
const BYTES = readFileSync(join(GENERATED, FILE));
const SHA = createHash('sha256').update(BYTES).digest('hex');
const DECISION = {
  model: 'jev',
  state: 'The train was late again and I missed my meeting.',
  questions: {
    late: { type: 'noul', instructions: 'Was something late?' },
    mood: { type: 'score', instructions: 'How annoyed?', criteria: ['calm', 'annoyed', 'furious'] },
  },
};

const q = (host: string, dtype = 'fp32') => `/?${new URLSearchParams({ model: MODEL, host, device: 'wasm', dtype })}`;

async function ready(page: Page): Promise<any> {
  await page.waitForFunction(() => !!(window as any).jev);
  return page.evaluate(() => (window as any).jev.ready);
}

async function decide(page: Page): Promise<unknown> {
  return page.evaluate(async (d) => (await (window as any).jev.decisions.create(d)).answers, DECISION);
}

/** The model's files in the page's model cache. */
async function storedFiles(page: Page, host: string, model = MODEL): Promise<string[]> {
  const prefix = `${host}/${model}/resolve/main/`;
  return page.evaluate(async (p) => (await (await caches.open('transformers-cache')).keys()).map((r) => r.url).filter((u) => u.startsWith(p)).map((u) => u.slice(p.length)), prefix);
}

/** The answers of the same model loaded whole from the mirror, in the same page. */
async function reference(page: Page): Promise<unknown> {
  await page.evaluate((host) => (window as any).jev.load({ model: 'tiny-random-llama', host, device: 'wasm', dtype: 'fp32' }), MIRROR);
  return decide(page);
}

test('with the quota forced small, the model loads and answers from memory, uncached, and says why, with the bytes and what to delete', async ({ page, baseURL }) => {
  // Another copy of the model stored first, from another host: something the panel can offer to delete.
  const other = await startModelHost([GENERATED], 0);
  try {
    await page.goto(q(other.url, 'q4'));
    expect((await ready(page)).storage.stored).toBe(true);
    const { usage } = await page.evaluate(() => navigator.storage.estimate());
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin: new URL(baseURL!).origin, quotaSize: usage! + 400_000 });
    await page.goto(q(MIRROR));
    const status = await ready(page);
    expect(status.state).toBe('ready');
    const storage = status.storage;
    expect(storage.stored).toBe(false);
    // Chromium enforces the override when writing (QuotaExceededError) but may not report it in estimate().
    expect(storage.unstored).toContainEqual(expect.objectContaining({ file: 'onnx/model.onnx', bytes: BYTES.length, reason: 'quota_exceeded' }));
    expect(storage.neededBytes).toBeGreaterThanOrEqual(BYTES.length);
    expect(typeof storage.availableBytes).toBe('number');
    expect(storage.message).toMatch(/not enough room|refused to store it/);
    expect(await storedFiles(page, MIRROR)).not.toContain('onnx/model.onnx');
    // The panel says the same, offers the other stored copy to delete, and shows what persist() answered.
    const line = page.getByTestId('storage-status');
    await expect(line).toHaveAttribute('data-stored', 'false');
    await expect(line).toContainText('not stored in this browser');
    await expect(line).toContainText('Stored in this browser');
    const deletable = page.getByTestId('storage-deletable').locator(`li[data-prefix="${other.url}/${MODEL}"]`);
    await expect(deletable).toBeVisible();
    await deletable.getByRole('button', { name: 'Delete' }).click();
    await expect(deletable).toHaveCount(0);
    expect(await storedFiles(page, other.url)).toEqual([]);
    await expect(page.getByTestId('storage-persistence')).not.toHaveAttribute('data-persistence', 'pending');
    const answers = await decide(page);
    expect(answers).toMatchObject({ late: { type: 'noul' }, mood: { type: 'score' } });
  } finally {
    await other.close();
  }
});

test('in a context without a profile, the 135M-shaped fp32 model (520 MB) loads and answers, and says why it is not stored', async ({ browser }) => {
  test.setTimeout(600_000);
  // A fresh context of Playwright's keeps no profile, as an Incognito window: Chromium refused to store this model there.
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`/?${new URLSearchParams({ model: 'smollm2-135m-random', host: MIRROR, device: 'wasm', dtype: 'fp32' })}`);
    const status = await ready(page);
    expect(status.state).toBe('ready');
    const big = status.storage.unstored.find((u: { file: string }) => u.file === 'onnx/model.onnx');
    console.log(`no profile, 135M fp32: ${JSON.stringify(status.storage)}`);
    expect(big, 'the browser stored it: nothing to test here').toBeDefined();
    expect(['store_failed', 'quota_exceeded']).toContain(big.reason);
    expect(status.storage.stored).toBe(false);
    expect(status.storage.message).toContain('not stored in this browser');
    await expect(page.getByTestId('storage-status')).toHaveAttribute('data-stored', 'false');
    const answers = await decide(page);
    expect(answers).toMatchObject({ late: { type: 'noul' }, mood: { type: 'score' } });
  } finally {
    await context.close();
  }
});

test('storage evicted between visits (Chromium clears the origin) is answered with a re-download, not an error', async ({ page, baseURL }) => {
  const host = await startModelHost([GENERATED], 0);
  try {
    await page.goto(q(host.url));
    expect((await ready(page)).storage.stored).toBe(true);
    const before = await decide(page);
    // Whole downloads of the graph (not transformers.js' size checks, which ask for a Range).
    const fetched = () => host.requests.filter((r) => r === `GET /${MODEL}/resolve/main/onnx/model.onnx`).length - host.ranged.filter((r) => r.path === FILE).length;
    expect(fetched()).toBe(1);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Storage.clearDataForOrigin', { origin: new URL(baseURL!).origin, storageTypes: 'cache_storage' });
    expect(await storedFiles(page, host.url)).toEqual([]);
    await page.reload();
    const status = await ready(page);
    expect(status.state).toBe('ready');
    expect(status.storage.stored).toBe(true);
    expect(fetched()).toBe(2);
    expect(await storedFiles(page, host.url)).toContain('onnx/model.onnx');
    expect(await decide(page)).toEqual(before);
  } finally {
    await host.close();
  }
});

test.describe('a download cut off halfway', () => {
  let host: ModelHost | null = null;
  test.afterEach(async () => {
    await host?.close();
    host = null;
  });

  /** A host that states the file's SHA-256 and holds its first whole download of model.onnx after half the bytes, until cut. */
  async function cuttingHost(ranges: boolean): Promise<ModelHost> {
    let cuts = 0;
    return startModelHost([GENERATED], 0, {
      ranges,
      holdBreaks: true,
      breakOff: (p, range) => p === FILE && !range && cuts++ === 0,
      headers: (p): Record<string, string> => (p === FILE ? { 'X-Linked-ETag': `"${SHA}"` } : {}),
    });
  }

  /**
   * The first load fails at the cut, made once the page reports the first half received (a browser
   * drops the bytes its page has not read when it hears of the failure first); the half is kept.
   * Returns its byte count.
   */
  async function cutOff(page: Page, h: ModelHost): Promise<number> {
    const half = BYTES.length >> 1;
    await page.goto(q(h.url));
    const received = () =>
      page.evaluate(() => Math.max(0, ...[...document.querySelectorAll('progress')].filter((p) => p.getAttribute('aria-label')?.startsWith('onnx/model.onnx:')).map((p) => p.value)));
    await expect.poll(received, { timeout: 60_000 }).toBe(half);
    expect(h.cut()).toBe(1);
    await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
    const url = `${h.url}/${FILE.replace(`${MODEL}/`, `${MODEL}/resolve/main/`)}`;
    const kept = await page.evaluate(async (u) => (await (await caches.open('jev-partial-downloads')).match(u))?.arrayBuffer().then((b) => b.byteLength) ?? 0, url);
    expect(kept).toBe(half);
    return kept;
  }

  test('after a reload, the host sees a Range request from the byte reached; the whole file is verified and stored, and the answers are right', async ({ page }) => {
    host = await cuttingHost(true);
    const kept = await cutOff(page, host);
    await page.reload();
    const status = await ready(page);
    expect(status.state).toBe('ready');
    expect(host.ranged.filter((r) => r.path === FILE && r.range !== 'bytes=0-0')).toEqual([{ path: FILE, range: `bytes=${kept}-`, status: 206 }]);
    expect(status.storage).toMatchObject({ stored: true, resumedBytes: kept });
    await expect(page.getByTestId('storage-status')).toContainText('interrupted download was resumed');
    const stored = await page.evaluate(async (u) => (await (await caches.open('transformers-cache')).match(u))?.headers.get('x-jev-sha256'), `${host.url}/${MODEL}/resolve/main/onnx/model.onnx`);
    expect(stored).toBe(SHA);
    const answers = await decide(page);
    expect(answers).toEqual(await reference(page));
  });

  test('a host that ignores Range gets a clean restart, and the answers are right', async ({ page }) => {
    host = await cuttingHost(false);
    const kept = await cutOff(page, host);
    await page.reload();
    const status = await ready(page);
    expect(status.state).toBe('ready');
    expect(host.ranged.filter((r) => r.path === FILE && r.range !== 'bytes=0-0')).toEqual([{ path: FILE, range: `bytes=${kept}-`, status: 200 }]);
    expect(status.storage).toMatchObject({ stored: true, resumedBytes: 0 });
    const answers = await decide(page);
    expect(answers).toEqual(await reference(page));
  });
});
