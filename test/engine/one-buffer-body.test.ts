/**
 * Response bodies in one buffer (src/engine/load/one-buffer-body.ts) and the fetch that reads model
 * files through them and the model cache (src/engine/load/model-fetch.ts): the bytes read are exactly
 * the bytes sent, whatever the chunking and whatever the announced size; every view handed out
 * lies in one buffer, in order; the buffer is released once read, or when the reader cancels; a
 * store that refuses the bytes fails the read.
 */
import { describe, expect, it } from 'vitest';
import { bufferBody, oneBufferBody, VIEW_BYTES } from '../../src/engine/load/one-buffer-body.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import type { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import { byteSource, pattern } from '../support/byte-source.ts';

/** A default (not byte) stream of the same chunks. */
function defaultSource(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + chunk));
      at += chunk;
    },
  });
}

/** Where a view lay when it was read (a released buffer empties its views afterwards). */
interface Span {
  offset: number;
  length: number;
  buffer: ArrayBufferLike;
  view: Uint8Array;
}

/** Reads a stream to the end, as transformers.js' readResponse does (copying each chunk before asking again). */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; views: Span[] }> {
  const reader = stream.getReader();
  const views: Span[] = [];
  const parts: Uint8Array[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    views.push({ offset: value.byteOffset, length: value.byteLength, buffer: value.buffer, view: value });
    parts.push(value.slice());
  }
  const bytes = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, views };
}

/** Each view starts where the previous one ended: one buffer, in order. */
function contiguous(views: Span[]): boolean {
  let at = 0;
  for (const v of views) {
    if (v.length > 0 && v.offset !== at) return false;
    at += v.length;
  }
  return views.length > 0;
}

describe('bufferBody', () => {
  it('hands out views over the buffer, in order, and releases it after the last', async () => {
    const bytes = pattern(2 * VIEW_BYTES + 12345);
    const buffer = bytes.slice().buffer as ArrayBuffer;
    const { bytes: read, views } = await readAll(bufferBody(buffer));
    expect(Buffer.from(read).equals(Buffer.from(bytes))).toBe(true);
    expect(views.map((v) => v.length)).toEqual([VIEW_BYTES, VIEW_BYTES, 12345]);
    expect(views.every((v) => v.buffer === buffer)).toBe(true);
    expect(contiguous(views)).toBe(true);
    expect(buffer.byteLength).toBe(0);
  });

  it('releases the buffer when the reader cancels', async () => {
    const buffer = pattern(3 * VIEW_BYTES).buffer as ArrayBuffer;
    const reader = bufferBody(buffer).getReader();
    await reader.read();
    await reader.cancel();
    expect(buffer.byteLength).toBe(0);
  });
});

describe('oneBufferBody', () => {
  const cases: [string, number, (b: Uint8Array) => number][] = [
    ['the announced size', 3 * VIEW_BYTES + 777, (b) => b.length],
    ['a size announced too small (the buffer grows)', VIEW_BYTES + 5000, (b) => b.length - 4321],
    ['a size announced too large', VIEW_BYTES + 5000, (b) => b.length + 99_999],
    ['no size announced', 2 * VIEW_BYTES + 1, () => 0],
    ['an empty body', 0, () => 0],
  ];
  for (const [name, n, announced] of cases) {
    it(`reads a byte stream into one buffer exactly, with ${name}`, async () => {
      const bytes = pattern(n, n + 7);
      const source = byteSource(bytes, [65536, 1, 300_000, 4096]);
      let stored: ArrayBuffer | null = null;
      const { bytes: read, views } = await readAll(
        oneBufferBody(source.stream, announced(bytes), async (whole) => {
          stored = whole;
        }),
      );
      expect(Buffer.from(read).equals(Buffer.from(bytes))).toBe(true);
      expect(stored).not.toBeNull();
      expect(Buffer.from(new Uint8Array(stored!)).equals(Buffer.from(bytes))).toBe(true);
      if (announced(bytes) === bytes.length && bytes.length > 0) expect(contiguous(views)).toBe(true);
    });
  }

  it('copies a stream that is not a byte stream into one buffer', async () => {
    const bytes = pattern(VIEW_BYTES + 999);
    let stored: ArrayBuffer | null = null;
    const { bytes: read, views } = await readAll(
      oneBufferBody(defaultSource(bytes, 100_000), bytes.length, async (whole) => {
        stored = whole;
      }),
    );
    expect(Buffer.from(read).equals(Buffer.from(bytes))).toBe(true);
    expect(contiguous(views)).toBe(true);
    expect(new Set(views.map((v) => v.buffer)).size).toBe(1);
    expect(stored!.byteLength).toBe(bytes.length);
  });

  it('without onEnd, releases its buffer at the end: every view it handed out is then empty', async () => {
    const bytes = pattern(VIEW_BYTES * 2);
    const { views } = await readAll(oneBufferBody(defaultSource(bytes, 70_000), bytes.length));
    expect(views.length).toBeGreaterThan(1);
    expect(views.every((v) => v.view.byteLength === 0)).toBe(true);
  });

  it('a cancelled read cancels the source', async () => {
    const bytes = pattern(4 * VIEW_BYTES);
    const source = byteSource(bytes, [VIEW_BYTES]);
    const reader = oneBufferBody(source.stream, bytes.length).getReader();
    await reader.read();
    await reader.cancel('enough');
    expect(source.cancelled()).toBe(true);
  });

  it('an onEnd that refuses the bytes fails the read with its error', async () => {
    const bytes = pattern(VIEW_BYTES);
    const stream = oneBufferBody(byteSource(bytes, [50_000]).stream, bytes.length, async () => {
      throw new Error('corrupt: the host states another hash');
    });
    await expect(readAll(stream)).rejects.toThrow(/corrupt: the host states another hash/);
  });
});

/** An IntegrityCache stand-in (the real one needs the Cache API: e2e/offline.spec.ts, load-failures.spec.ts). */
function fakeCache(entries: Map<string, Uint8Array>, refuse = false) {
  const calls = { match: 0, head: 0, store: [] as string[] };
  const cache = {
    async admit() {
      return true;
    },
    async match(key: string) {
      calls.match++;
      const hit = entries.get(key);
      return hit ? new Response(hit.slice(), { headers: { 'content-length': String(hit.length) } }) : undefined;
    },
    async head(key: string) {
      calls.head++;
      const hit = entries.get(key);
      return hit ? new Headers({ 'content-length': String(hit.length) }) : undefined;
    },
    async store(key: string, body: ArrayBuffer) {
      if (refuse) throw new Error(`The download of ${key} is corrupt`);
      calls.store.push(key);
      entries.set(key, new Uint8Array(body.slice(0)));
    },
  };
  return { cache: cache as unknown as IntegrityCache, calls };
}

describe('modelFetch', () => {
  const URL_ = 'http://host.test/m/resolve/main/onnx/model.onnx';
  const file = pattern(VIEW_BYTES + 4242, 3);
  const network = () => {
    const requests: { url: string; range: boolean; method: string }[] = [];
    const fn = async (input: string | URL, init?: RequestInit) => {
      requests.push({ url: String(input), range: new Headers(init?.headers).has('range'), method: init?.method ?? 'GET' });
      if (String(input).endsWith('missing')) return new Response('Entry not found', { status: 404 });
      return new Response(byteSource(file, [100_000]).stream, { headers: { 'content-length': String(file.length), 'x-linked-etag': '"abc"' } });
    };
    return { fn, requests };
  };

  it('a miss is fetched once, read whole, and stored; the next read comes from the cache', async () => {
    const entries = new Map<string, Uint8Array>();
    const { cache, calls } = fakeCache(entries);
    const net = network();
    const fetchModel = modelFetch(net.fn, cache);
    const first = await fetchModel(URL_);
    expect(first.headers.get('x-linked-etag')).toBe('"abc"');
    expect(Buffer.from((await readAll(first.body!)).bytes).equals(Buffer.from(file))).toBe(true);
    expect(calls.store).toEqual([URL_]);
    const second = await fetchModel(URL_);
    expect(Buffer.from(new Uint8Array(await second.arrayBuffer())).equals(Buffer.from(file))).toBe(true);
    expect(net.requests).toHaveLength(1);
  });

  it('a Range request (a size check) is answered from the stored headers, without the network', async () => {
    const { cache, calls } = fakeCache(new Map([[URL_, file]]));
    const net = network();
    const r = await modelFetch(net.fn, cache)(URL_, { headers: { Range: 'bytes=0-0' } });
    expect(r.headers.get('content-length')).toBe(String(file.length));
    expect(calls.head).toBe(1);
    expect(calls.match).toBe(0);
    expect(net.requests).toHaveLength(0);
    // Not stored: it goes to the network.
    await modelFetch(net.fn, fakeCache(new Map()).cache)(URL_, { headers: { Range: 'bytes=0-0' } });
    expect(net.requests).toEqual([{ url: URL_, range: true, method: 'GET' }]);
  });

  it('a download the cache refuses fails the read, and nothing is stored', async () => {
    const entries = new Map<string, Uint8Array>();
    const { cache } = fakeCache(entries, true);
    const r = await modelFetch(network().fn, cache)(URL_);
    await expect(readAll(r.body!)).rejects.toThrow(/corrupt/);
    expect(entries.size).toBe(0);
  });

  it('errors and other methods pass through untouched; without a cache, bodies are still one buffer', async () => {
    const { cache, calls } = fakeCache(new Map());
    const net = network();
    const fetchModel = modelFetch(net.fn, cache);
    expect((await fetchModel('http://host.test/missing')).status).toBe(404);
    expect((await fetchModel(URL_, { method: 'HEAD' })).status).toBe(200);
    expect(net.requests.map((r) => r.method)).toEqual(['GET', 'HEAD']);
    expect(calls.store).toEqual([]);
    const plain = await modelFetch(net.fn, null)(URL_);
    const { bytes, views } = await readAll(plain.body!);
    expect(Buffer.from(bytes).equals(Buffer.from(file))).toBe(true);
    expect(contiguous(views)).toBe(true);
  });
});
