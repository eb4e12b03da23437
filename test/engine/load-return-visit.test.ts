/**
 * The return visit's load (issue 62): a stored model file whose check was recorded when it was
 * stored (storage/checked-records.ts) is not hashed again by the next load; one without a record, or
 * whose size or bytes changed, is hashed whole and, damaged, refused and fetched again. Over the
 * Cache API stand-in; the whole-file hashes counted with a spy on `crypto.subtle.digest`.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IntegrityCache, MODEL_CACHE } from '../../src/engine/load/storage/integrity-cache.ts';
import { RECORD_CACHE, sampleBlocks } from '../../src/engine/load/storage/checked-records.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { pattern } from '../support/byte-source.ts';
import { fakeCaches, fakeStorage, type FakeCaches } from '../support/fake-cache-storage.ts';

const URL_ = 'http://host.test/m/resolve/main/onnx/model.onnx';
// Larger than the 1 MiB sample, so that hashing the whole file and hashing the sample are told apart.
const file = pattern(3_000_000, 7);
const sha = createHash('sha256').update(file).digest('hex');

function host() {
  let requests = 0;
  const fn = async () => {
    requests++;
    return new Response(file.slice(), { status: 200, headers: { 'content-length': String(file.length), 'x-linked-etag': `"${sha}"` } });
  };
  return { fn, requests: () => requests };
}

async function readBytes(response: Response): Promise<Uint8Array> {
  const reader = response.body!.getReader();
  const parts: Uint8Array[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value.slice());
  return new Uint8Array(Buffer.concat(parts));
}

let f: FakeCaches;
/** Calls of SHA-256 over `file.length` bytes or more: the whole file hashed. */
let wholeHashes: () => number;
beforeEach(() => {
  f = fakeCaches();
  vi.stubGlobal('caches', f.caches);
  vi.stubGlobal('navigator', fakeStorage(f, 1e9));
  // Counted at the call: the engine releases (detaches) a buffer once it is done with it.
  let whole = 0;
  const digest = crypto.subtle.digest.bind(crypto.subtle);
  vi.spyOn(crypto.subtle, 'digest').mockImplementation((algorithm, data) => {
    if ((data as ArrayBuffer).byteLength >= file.length) whole++;
    return digest(algorithm, data);
  });
  wholeHashes = () => whole;
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

/** One load's read of the file: a fresh cache object, as each load of the engine has. */
async function load(h: ReturnType<typeof host>): Promise<{ bytes: Uint8Array; cache: IntegrityCache }> {
  const cache = new IntegrityCache();
  return { bytes: await readBytes(await modelFetch(h.fn, cache)(URL_)), cache };
}

const stored = () => f.stores.get(MODEL_CACHE)!.get(URL_)!;
const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

describe('a stored file is hashed when stored, not on every load', () => {
  it('the first load hashes the download once; the second reads it from storage without hashing it', async () => {
    const h = host();
    expect(same((await load(h)).bytes, file)).toBe(true);
    expect(wholeHashes()).toBe(1);
    expect(f.stores.get(RECORD_CACHE)?.has(URL_)).toBe(true);
    const second = await load(h);
    expect(same(second.bytes, file)).toBe(true);
    expect(h.requests()).toBe(1);
    expect(wholeHashes()).toBe(1);
    expect(second.cache.dropped).toEqual([]);
  });

  it('a stored file without a record is hashed as before, once: the check is recorded, and the next load does not hash it', async () => {
    const h = host();
    await load(h);
    f.stores.get(RECORD_CACHE)!.delete(URL_);
    expect(same((await load(h)).bytes, file)).toBe(true);
    expect(wholeHashes()).toBe(2);
    await load(h);
    expect(wholeHashes()).toBe(2);
    expect(h.requests()).toBe(1);
  });

  it('a stored file whose size changed is refused and fetched again; the download is hashed, stored and recorded anew', async () => {
    const h = host();
    await load(h);
    const entry = stored();
    entry.body = entry.body.slice(0, file.length - 1000); // its recorded size and SHA-256 stay
    const { bytes, cache } = await load(h);
    expect(same(bytes, file)).toBe(true);
    expect(cache.dropped).toEqual([{ key: URL_, problem: 'size' }]);
    expect(h.requests()).toBe(2);
    expect(wholeHashes()).toBe(2);
    expect(same(stored().body, file)).toBe(true);
    await load(h);
    expect(wholeHashes()).toBe(2);
  });

  it('a stored file rewritten at another size, its size header with it, matches no record: hashed whole and refused', async () => {
    const h = host();
    await load(h);
    const entry = stored();
    const longer = new Uint8Array(file.length + 5000);
    longer.set(file);
    entry.body = longer;
    entry.headers.set('x-jev-size', String(longer.length));
    const { bytes, cache } = await load(h);
    expect(same(bytes, file)).toBe(true);
    expect(cache.dropped).toEqual([{ key: URL_, problem: 'hash' }]);
    expect(wholeHashes()).toBe(3); // the refused file, and the new download
    expect(h.requests()).toBe(2);
  });

  it('a stored file whose last bytes were flipped (size and headers kept) fails its sample: hashed whole, refused, fetched again', async () => {
    const h = host();
    await load(h);
    const body = stored().body;
    for (let i = body.length - 4096; i < body.length - 2048; i++) body[i] = body[i]! ^ 0xff;
    const { bytes, cache } = await load(h);
    expect(same(bytes, file)).toBe(true);
    expect(cache.dropped).toEqual([{ key: URL_, problem: 'hash' }]);
    expect(wholeHashes()).toBe(3);
  });

  it('the sample spans the file: its first and last bytes, 16 blocks of 64 KiB, and the whole of a small file', () => {
    const blocks = sampleBlocks(file.length);
    expect(blocks).toHaveLength(16);
    expect(blocks[0]![0]).toBe(0);
    expect(blocks.at(-1)![1]).toBe(file.length);
    expect(blocks.every(([s, e]) => e - s === 65536)).toBe(true);
    expect(sampleBlocks(1000)).toEqual([[0, 1000]]);
  });
});

