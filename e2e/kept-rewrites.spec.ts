import { expect, test, type Page } from '@playwright/test';
import { MIRROR } from './support/env.ts';

/**
 * The session rewrites kept between loads, in Chromium (src/engine/load/rewritten-graphs.ts,
 * storage/opfs-kept-store.ts): a q4 load on wasm rewrites its 4-bit projections into 8-bit ones
 * and keeps what it made in the Origin Private File System; the return visit reads them there
 * (nothing is written again, nothing of it goes to the Cache API) and answers the same; a part
 * damaged on disk is a miss, made and written again, with the same bytes and answers; the Model
 * panel lists the kept files with the model's, and deleting the model deletes them. At fp32,
 * where the graph reads most of the model's file, the OPFS keeps all it reads (the Cache API would
 * keep half at most), and the return visit does not read the file. A return visit mounts the kept
 * parts unread: the session reads each weight from disk as it asks for it (part-on-disk.ts).
 */
const MODEL = 'tiny-random-llama';
const URL_ = `/?${new URLSearchParams({ model: MODEL, host: MIRROR, device: 'wasm', dtype: 'q4' })}`;
const DECISION = {
  model: 'jev',
  state: 'The parcel arrived two days late and the box was crushed.',
  questions: {
    late: { type: 'noul', instructions: 'Was the parcel late?' },
    mood: { type: 'score', instructions: 'How upset is the writer?', criteria: ['calm', 'annoyed', 'furious'] },
  },
};

interface KeptOnDisk {
  path: string;
  bytes: number;
  modified: number;
  sha256: string;
}

async function ready(page: Page): Promise<any> {
  await page.waitForFunction(() => !!(window as any).jev);
  return page.evaluate(() => (window as any).jev.ready);
}

async function decide(page: Page): Promise<unknown> {
  return page.evaluate(async (d) => (await (window as any).jev.decisions.create(d)).answers, DECISION);
}

/** Every file under the OPFS's `jev-kept`, with its size, modification time and SHA-256. */
async function keptOnDisk(page: Page): Promise<KeptOnDisk[]> {
  return page.evaluate(async () => {
    const out: KeptOnDisk[] = [];
    const root = await navigator.storage.getDirectory();
    const kept = await root.getDirectoryHandle('jev-kept').catch(() => null);
    const walk = async (dir: FileSystemDirectoryHandle, path: string): Promise<void> => {
      for await (const [name, entry] of (dir as any).entries() as AsyncIterable<[string, FileSystemHandle]>) {
        if (entry.kind === 'directory') await walk(entry as FileSystemDirectoryHandle, `${path}/${name}`);
        else {
          const file = await (entry as FileSystemFileHandle).getFile();
          const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
          out.push({ path: `${path}/${name}`, bytes: file.size, modified: file.lastModified, sha256: Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('') });
        }
      }
    };
    if (kept) await walk(kept, '');
    return out.sort((a, b) => a.path.localeCompare(b.path));
  });
}

async function cacheKeys(page: Page): Promise<string[]> {
  return page.evaluate(async () => (await (await caches.open('transformers-cache')).keys()).map((r) => r.url));
}

test('a q4 load keeps its rewrite in the OPFS; the return visit reads it and answers the same; a damaged part is made again; the panel lists and deletes it', async ({ page }) => {
  await page.goto(URL_);
  const first = await ready(page);
  expect(first.int8Projections).toBeGreaterThan(0);
  const answers = await decide(page);
  const stored = await keptOnDisk(page);
  const names = stored.map((f) => f.path.split('/').pop());
  // The folder's URL, the manifest, the graph, the int8 projections' file and the model's own bytes the graph reads.
  expect(names).toEqual(expect.arrayContaining(['url', 'manifest.json', 'graph', 'jev-kept-weights']));
  expect(stored.length).toBeGreaterThanOrEqual(5);
  expect((await cacheKeys(page)).filter((u) => u.includes('.jev-rewritten/'))).toEqual([]);

  expect(first.lastLoad.keptReadAsAsked).toBe(0);

  await page.reload();
  const again = await ready(page);
  expect(again.lastLoad.fromCache).toBe(true);
  expect(again.int8Projections).toBe(first.int8Projections);
  // Mounted unread, read by the session as it asked for each weight (part-on-disk.ts): at most the parts it mounts.
  const mounted = stored.filter((f) => !/\/(url|manifest\.json|graph|kernel-q|kernel-s)$/.test(f.path)).reduce((n, f) => n + f.bytes, 0);
  expect(again.lastLoad.keptReadAsAsked).toBeGreaterThan(0);
  expect(again.lastLoad.keptReadAsAsked).toBeLessThanOrEqual(mounted);
  expect(await decide(page)).toEqual(answers);
  // Read, not made again: not one kept file was written by the return visit.
  expect(await keptOnDisk(page)).toEqual(stored);

  // The largest part's last KiB flipped, its size kept: its sample no longer matches its manifest.
  const largest = stored.filter((f) => !f.path.endsWith('/url') && !f.path.endsWith('/manifest.json')).sort((a, b) => b.bytes - a.bytes)[0]!;
  await page.evaluate(async (path) => {
    let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('jev-kept');
    const parts = path.split('/').filter(Boolean);
    for (const name of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(name);
    const handle = await dir.getFileHandle(parts.at(-1)!);
    const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
    for (let i = 1; i <= 1024; i++) bytes[bytes.length - i] = bytes[bytes.length - i]! ^ 0xff;
    const writable = await handle.createWritable();
    await writable.write(bytes);
    await writable.close();
  }, largest.path);
  expect((await keptOnDisk(page)).find((f) => f.path === largest.path)!.sha256).not.toBe(largest.sha256);
  await page.reload();
  await ready(page);
  expect(await decide(page)).toEqual(answers);
  const remade = await keptOnDisk(page);
  expect(remade.map(({ path, bytes, sha256 }) => ({ path, bytes, sha256 }))).toEqual(stored.map(({ path, bytes, sha256 }) => ({ path, bytes, sha256 })));
  expect(remade.find((f) => f.path === largest.path)!.modified).toBeGreaterThan(largest.modified);

  // The Model panel: the kept files among the model's, at their sizes; deleting the model deletes them.
  const cache = page.getByTestId('cache-status');
  await expect(cache).toContainText('stored in this browser');
  await cache.getByText('Stored files').click();
  const manifest = stored.find((f) => f.path.endsWith('/manifest.json'))!;
  const signature = decodeURIComponent(manifest.path.split('/').at(-2)!);
  const row = cache.locator(`[data-testid="cached-file"][data-file="onnx/model_q4.onnx.jev-rewritten/${signature}/graph"]`);
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-bytes', String(stored.find((f) => f.path.endsWith('/graph'))!.bytes));
  await cache.getByRole('button', { name: `Delete ${MODEL} from the cache` }).click();
  await expect(cache.getByRole('status')).toContainText('Deleted');
  await expect(cache).toHaveAttribute('data-files', '0');
  expect(await keptOnDisk(page)).toEqual([]);
});

test('at fp32 the OPFS keeps all the graph reads of the model file (most of it): the return visit does not read the file', async ({ page }) => {
  await page.goto(`/?${new URLSearchParams({ model: MODEL, host: MIRROR, device: 'wasm', dtype: 'fp32' })}`);
  await ready(page);
  const answers = await decide(page);
  const stored = await keptOnDisk(page);
  const file = (await cacheKeys(page)).find((u) => u.endsWith('/onnx/model.onnx'))!;
  expect(file).toBeTruthy();
  const fileBytes = await page.evaluate(async (url) => (await (await (await caches.open('transformers-cache')).match(url))!.arrayBuffer()).byteLength, file);
  const weights = stored.find((f) => f.path.endsWith('/jev-kept-weights'));
  // More than half the file: the Cache API would not keep it (cache-kept-store.ts); the OPFS does.
  expect(weights?.bytes ?? 0).toBeGreaterThan(fileBytes / 2);
  expect(weights!.bytes).toBeLessThanOrEqual(fileBytes);

  // The stored file's body zeroed, its headers and record kept: a load that read it would find its sample wrong and download it again.
  await page.evaluate(async (url) => {
    const cache = await caches.open('transformers-cache');
    const hit = (await cache.match(url))!;
    const size = (await hit.clone().arrayBuffer()).byteLength;
    await cache.put(url, new Response(new Uint8Array(size), { headers: hit.headers }));
  }, file);
  await page.reload();
  const again = await ready(page);
  expect(again.lastLoad.bytesFetched).toBe(0);
  // The kept weights (more than half the file) read by the session as it asked, never held whole.
  expect(again.lastLoad.keptReadAsAsked).toBeGreaterThan(fileBytes / 2);
  expect(await decide(page)).toEqual(answers);
  expect(await keptOnDisk(page)).toEqual(stored);
});
