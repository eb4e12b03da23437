/**
 * Storage that survives (src/engine/load/: integrity-cache.ts, partial-downloads.ts, resume-fetch.ts,
 * storage-report.ts), over a Cache API stand-in: a file the browser will not store is served all the
 * same and the report says why, with the bytes; an entry whose body was evicted is fetched again; a
 * download cut off is resumed from the byte reached with `Range`, its whole SHA-256 still checked;
 * a host that ignores `Range` restarts the file cleanly. Chromium's own behaviour: e2e/storage.spec.ts.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { httpSource } from '../../src/engine/load/http-source.ts';
import { IntegrityCache, MODEL_CACHE } from '../../src/engine/load/storage/integrity-cache.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { PARTIAL_CACHE } from '../../src/engine/load/storage/partial-downloads.ts';
import { storageMark, storageReport } from '../../src/engine/load/storage/storage-report.ts';
import { pattern } from '../support/byte-source.ts';
import { fakeCaches, fakeStorage, type FakeCaches } from '../support/fake-cache-storage.ts';

const BASE = 'http://host.test/m/resolve/main/';
const URL_ = `${BASE}onnx/model.onnx`;
const file = pattern(900_000, 11);
const sha = createHash('sha256').update(file).digest('hex');

/** A host of `file` that logs each request's Range, honours it where `ranges`, and cuts the first answer after `cutAt` bytes. */
function host(options: { ranges: boolean; cutAt?: number }) {
  const log: { range: string | null; status: number }[] = [];
  let cuts = options.cutAt === undefined ? 0 : 1;
  const fn = async (_input: string | URL, init?: RequestInit) => {
    const range = new Headers(init?.headers).get('range');
    const m = options.ranges && range ? /^bytes=(\d+)-$/.exec(range) : null;
    const from = m ? Number(m[1]) : 0;
    const cut = cuts-- > 0 ? options.cutAt! : Infinity;
    const status = m ? 206 : 200;
    log.push({ range, status });
    let at = from;
    const stream = new ReadableStream({
      type: 'bytes',
      pull(c: ReadableByteStreamController) {
        if (at >= cut) return c.error(new TypeError('network error'));
        if (at >= file.length) {
          c.close();
          c.byobRequest?.respond(0);
          return;
        }
        const n = Math.min(64 << 10, file.length - at, cut - at);
        c.enqueue(file.slice(at, at + n));
        at += n;
      },
    });
    const headers: Record<string, string> = { 'content-length': String(file.length - from), 'x-linked-etag': `"${sha}"` };
    if (m) headers['content-range'] = `bytes ${from}-${file.length - 1}/${file.length}`;
    return new Response(stream, { status, headers });
  };
  return { fn, log };
}

/** Reads a body as transformers.js does, copying each view before asking for the next (the views' buffer is released at the end). */
async function readBytes(response: Response): Promise<Uint8Array> {
  const reader = response.body!.getReader();
  const parts: Uint8Array[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value.slice());
  return new Uint8Array(Buffer.concat(parts));
}

const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

let f: FakeCaches;
beforeEach(() => {
  f = fakeCaches();
  vi.stubGlobal('caches', f.caches);
  vi.stubGlobal('navigator', fakeStorage(f, 1e9));
});
afterEach(() => vi.unstubAllGlobals());

describe('a file the browser does not store is served all the same', () => {
  it('a put refused as Chromium without a profile refuses it: served, not stored, and the report quotes the browser', async () => {
    f.refusePut = new DOMException("Failed to execute 'put' on 'Cache': Unexpected internal error.", 'UnknownError');
    const cache = new IntegrityCache();
    const mark = storageMark(cache);
    const bytes = await readBytes(await modelFetch(host({ ranges: true }).fn, cache)(URL_));
    expect(same(bytes, file)).toBe(true);
    expect(f.stores.get(MODEL_CACHE)?.size ?? 0).toBe(0);
    const report = await storageReport(cache, mark, BASE);
    expect(report).toMatchObject({ stored: false, neededBytes: file.length, unstored: [{ file: 'onnx/model.onnx', bytes: file.length, reason: 'store_failed' }] });
    expect(report.message).toContain('Unexpected internal error');
    expect(report.message).toContain('Stored in this browser');
  });

  it('a file larger than the room estimate() leaves is not written at all, and the report gives both figures', async () => {
    const quota = 500_000;
    vi.stubGlobal('navigator', fakeStorage(f, quota));
    const cache = new IntegrityCache();
    const mark = storageMark(cache);
    const bytes = await readBytes(await modelFetch(host({ ranges: true }).fn, cache)(URL_));
    expect(same(bytes, file)).toBe(true);
    expect(f.stores.get(MODEL_CACHE)?.size ?? 0).toBe(0);
    const report = await storageReport(cache, mark, BASE);
    expect(report).toMatchObject({ stored: false, neededBytes: file.length, availableBytes: quota, quotaBytes: quota, unstored: [{ reason: 'quota_exceeded' }] });
    expect(report.message).toContain("not enough room");
  });

  it('where it fits, it is stored and the report says so', async () => {
    const cache = new IntegrityCache();
    const mark = storageMark(cache);
    await readBytes(await modelFetch(host({ ranges: true }).fn, cache)(URL_));
    expect(f.stores.get(MODEL_CACHE)?.has(URL_)).toBe(true);
    expect(await storageReport(cache, mark, BASE)).toMatchObject({ stored: true, unstored: [], neededBytes: 0, message: null });
  });
});

it('an entry whose body the browser evicted is dropped and fetched again, and the report names it', async () => {
  const cache = new IntegrityCache();
  const h = host({ ranges: true });
  await readBytes(await modelFetch(h.fn, cache)(URL_));
  f.unreadable.add(URL_);
  const mark = storageMark(cache);
  const bytes = await readBytes(await modelFetch(h.fn, cache)(URL_));
  expect(same(bytes, file)).toBe(true);
  expect(h.log).toHaveLength(2);
  expect(cache.dropped).toEqual([{ key: URL_, problem: 'evicted' }]);
  expect((await storageReport(cache, mark, BASE)).redownloaded).toEqual(['onnx/model.onnx']);
});

it("a stored config.json whose body was evicted is asked of the host again, not a failed load", async () => {
  const url = `${BASE}config.json`;
  const config = { model_type: 'llama' };
  await (await caches.open(MODEL_CACHE)).put(url, new Response(JSON.stringify(config)));
  f.unreadable.add(url);
  const asked: string[] = [];
  const fetchFn = (async (u: string) => {
    asked.push(u);
    return new Response(JSON.stringify(config), { headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  const source = httpSource({ model: 'm', host: 'http://host.test', device: 'wasm', dtype: 'fp32' }, { cacheName: MODEL_CACHE, fetch: fetchFn });
  expect(await source.check()).toEqual(config);
  expect(asked).toEqual([url]);
});

describe('an interrupted download resumes', () => {
  const cutAt = 400_000;

  /** The first download, cut off: its read fails, and the part received is kept. */
  async function cutOff(fn: ReturnType<typeof host>['fn'], cache: IntegrityCache): Promise<number> {
    await expect(readBytes(await modelFetch(fn, cache)(URL_))).rejects.toThrow();
    const kept = f.stores.get(PARTIAL_CACHE)?.get(URL_);
    expect(kept).toBeDefined();
    expect(f.stores.get(MODEL_CACHE)?.has(URL_) ?? false).toBe(false);
    return kept!.body.byteLength;
  }

  it('asks for the rest from the byte reached, joins it on, checks the whole SHA-256 and stores the whole file', async () => {
    const cache = new IntegrityCache();
    const h = host({ ranges: true, cutAt });
    const kept = await cutOff(h.fn, cache);
    expect(kept).toBe(cutAt);
    const mark = storageMark(cache);
    const bytes = await readBytes(await modelFetch(h.fn, cache)(URL_));
    expect(same(bytes, file)).toBe(true);
    expect(h.log.map((l) => [l.range, l.status])).toEqual([
      [null, 200],
      [`bytes=${kept}-`, 206],
    ]);
    expect(same(f.stores.get(MODEL_CACHE)!.get(URL_)!.body, file)).toBe(true);
    expect(f.stores.get(PARTIAL_CACHE)!.has(URL_)).toBe(false);
    expect((await storageReport(cache, mark, BASE)).resumedBytes).toBe(kept);
  });

  it('a host that ignores Range restarts the file cleanly', async () => {
    const cache = new IntegrityCache();
    const h = host({ ranges: false, cutAt });
    const kept = await cutOff(h.fn, cache);
    const mark = storageMark(cache);
    const bytes = await readBytes(await modelFetch(h.fn, cache)(URL_));
    expect(same(bytes, file)).toBe(true);
    expect(h.log.map((l) => [l.range, l.status])).toEqual([
      [null, 200],
      [`bytes=${kept}-`, 200],
    ]);
    expect(f.stores.get(PARTIAL_CACHE)!.has(URL_)).toBe(false);
    expect(same(f.stores.get(MODEL_CACHE)!.get(URL_)!.body, file)).toBe(true);
    expect((await storageReport(cache, mark, BASE)).resumedBytes).toBe(0);
  });

  it('a kept part that is not the start of the file fails the whole SHA-256: refused, nothing stored', async () => {
    const cache = new IntegrityCache();
    const h = host({ ranges: true, cutAt });
    await cutOff(h.fn, cache);
    const kept = f.stores.get(PARTIAL_CACHE)!.get(URL_)!.body;
    kept[1234] = kept[1234]! ^ 0xff;
    await expect(readBytes(await modelFetch(h.fn, cache)(URL_))).rejects.toThrow(/corrupt/);
    expect(cache.refused.map((r) => r.key)).toEqual([URL_]);
    expect(f.stores.get(MODEL_CACHE)?.has(URL_) ?? false).toBe(false);
  });
});
