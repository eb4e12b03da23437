/**
 * The return visit's load (issue 62): a stored model file whose check was recorded when it was
 * stored (storage/checked-records.ts) is not hashed again by the next load; one without a record, or
 * whose size or bytes changed, is hashed whole and, damaged, refused and fetched again. Over the
 * Cache API stand-in; the whole-file hashes counted with a spy on `crypto.subtle.digest`.
 *
 * And the session rewrites kept (rewritten-graphs.ts): the second load of a model file reads what
 * the first one's rewrites made (the same graph, the same int8 weights, the same head kernel)
 * instead of making it; a file of another SHA-256 has its rewrites made again. `REWRITE_VERSION`
 * is bumped with every change to the rewrites' sources (a digest of them kept per version, below).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelHandoff } from '../../src/engine/load/model-handoff.ts';
import { KEPT_WEIGHTS, REWRITE_VERSION, RewrittenGraphs } from '../../src/engine/load/rewritten-graphs.ts';
import { INLINE_WEIGHTS } from '../../src/engine/load/rewrite-session.ts';
import { readGraph } from '../../src/engine/graph/onnx-graph.ts';
import { rewriteSignature, rewritesOn, withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { GENERATED, REPO, TINY } from '../support/models.ts';
import { IntegrityCache, MODEL_CACHE } from '../../src/engine/load/storage/integrity-cache.ts';
import { RECORD_CACHE, sampleBlocks } from '../../src/engine/load/storage/checked-records.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { pattern } from '../support/byte-source.ts';
import { fakeCaches, fakeStorage, type FakeCaches } from '../support/fake-cache-storage.ts';
import type { KeptCheck, KeptPlace, KeptStore } from '../../src/engine/load/storage/kept-store.ts';
import { GatheredBytes, type KeptBytes } from '../../src/engine/load/storage/gathered-bytes.ts';
import { PartOnDisk } from '../../src/engine/load/storage/part-on-disk.ts';

const rewriteCalls = vi.hoisted(() => ({ n: 0 }));
vi.mock('../../src/engine/load/rewrite-session.ts', async (original) => {
  const m = await original<typeof import('../../src/engine/load/rewrite-session.ts')>();
  return { ...m, rewriteSession: (...args: Parameters<typeof m.rewriteSession>) => (rewriteCalls.n++, m.rewriteSession(...args)) };
});

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

describe('the rewritten graph is kept', () => {
  const MODEL_URL = 'http://host.test/m/resolve/main/onnx/model_q4.onnx';
  const q4 = () => new Uint8Array(readFileSync(join(GENERATED, TINY, 'onnx', 'model_q4.onnx')));
  const q4Sha = createHash('sha256').update(q4()).digest('hex');

  interface Created {
    graph: Uint8Array;
    externalData: { path: string; data: Uint8Array; onDisk?: boolean }[];
    /** The session option: off where the graph's shapes are named (session-rewrites.ts `sessionOptions`). */
    enableMemPattern?: boolean;
  }

  /** One wasm q4 load of the file (sha256 as its storage checked it): what onnxruntime was given (copied: the load releases its buffers), and the head kernel's matrix. */
  async function rewriteLoad(sha256 = q4Sha, store?: KeptStore, model: { url: string; bytes: () => Uint8Array; dtype: 'q4' | 'fp32' } = { url: MODEL_URL, bytes: q4, dtype: 'q4' }) {
    const created: Created[] = [];
    const factory = {
      create: async (graph: Uint8Array, options: { externalData?: { path: string; data: Uint8Array }[]; enableMemPattern?: boolean }) => {
        // Read as onnxruntime-web reads a mounted file (test/engine/part-on-disk.test.ts): its byteLength, then ranges of it.
        created.push({
          graph: graph.slice(),
          externalData: (options.externalData ?? []).map((f) => ({ path: f.path, data: f.data.subarray(0, f.data.byteLength).slice(), onDisk: f.data instanceof PartOnDisk })),
          ...('enableMemPattern' in options ? { enableMemPattern: options.enableMemPattern } : {}),
        });
        return {};
      },
    };
    const handoff = new ModelHandoff();
    const ticket = handoff.deposit(model.url, model.bytes().buffer as ArrayBuffer, sha256);
    const before = rewriteCalls.n;
    const kept = new RewrittenGraphs(store);
    const { report } = await withSessionRewrites(factory, () => factory.create(ticket, {}), handoff, rewritesOn('wasm', model.dtype), null, kept);
    const kernel = report.kernelHead?.kernel;
    return { created: created[0]!, rewrites: rewriteCalls.n - before, report, q: kernel?.q.slice(), s: kernel?.s.slice(), kept };
  }

  it('the second load does not rewrite: it creates the session from the first rewrite\'s bytes, read from storage', async () => {
    const first = await rewriteLoad();
    expect(first.rewrites).toBe(1);
    expect(first.report.int8Projections).toBeGreaterThan(0);
    expect(first.report.int8Head.engineKernel).toBe(true);
    const second = await rewriteLoad();
    expect(second.rewrites).toBe(0);
    // The same model: the same nodes, and every initializer the same bytes, now read from the kept part instead of the file.
    expect(meaning(second.created)).toEqual(meaning(first.created));
    expect(first.created.externalData.map((f) => f.path)).toContain(INLINE_WEIGHTS);
    expect(second.created.externalData.map((f) => f.path)).toEqual([...first.created.externalData.map((f) => f.path).filter((p) => p !== INLINE_WEIGHTS), KEPT_WEIGHTS]);
    for (const f of first.created.externalData.filter((f) => f.path !== INLINE_WEIGHTS)) expect(same(second.created.externalData.find((s) => s.path === f.path)!.data, f.data), f.path).toBe(true);
    // What it still reads of the file: a part of it (q4: norms and biases; the projections and the head are int8 parts).
    const kept = second.created.externalData.find((f) => f.path === KEPT_WEIGHTS)!.data;
    expect(kept.byteLength).toBeLessThan(q4().byteLength / 2);
    expect(Buffer.from(second.q!.buffer).equals(Buffer.from(first.q!.buffer))).toBe(true);
    expect(Buffer.from(second.s!.buffer).equals(Buffer.from(first.s!.buffer))).toBe(true);
    const { released, collected, kernelHead, ...counts } = second.report;
    const { released: _r, collected: _c, kernelHead: _k, ...firstCounts } = first.report;
    expect(counts).toEqual(firstCounts);
    expect(kernelHead).toMatchObject({ hidden: first.report.kernelHead!.hidden, embeds: first.report.kernelHead!.embeds });
    // The graph's shapes named (symbolic-shapes.ts), kept with it: both sessions without a memory pattern.
    expect(onnxProto.onnx.ModelProto.decode(second.created.graph).graph!.valueInfo!.length).toBeGreaterThan(0);
    expect([first.created.enableMemPattern, second.created.enableMemPattern]).toEqual([false, false]);
  });

  it('a file of another SHA-256 (the model changed on its host) is rewritten again, and that rewrite kept over the old one', async () => {
    await rewriteLoad();
    const other = 'ab'.repeat(32);
    expect((await rewriteLoad(other)).rewrites).toBe(1);
    expect((await rewriteLoad(other)).rewrites).toBe(0);
    expect((await rewriteLoad()).rewrites).toBe(1);
  });

  it('a stored part that is not the one its manifest names (its bytes changed) is a miss: rewritten again', async () => {
    await rewriteLoad();
    const key = [...f.stores.get(MODEL_CACHE)!.keys()].find((k) => k.endsWith('/jev-int8-weights'))!;
    const entry = f.stores.get(MODEL_CACHE)!.get(key)!;
    entry.body = entry.body.slice(0, entry.body.length - 64);
    entry.headers.set('x-jev-size', String(entry.body.length));
    expect((await rewriteLoad()).rewrites).toBe(1);
  });

  /** A store standing for the OPFS's (its own reads, writes and checks: e2e/kept-rewrites.spec.ts, in Chromium): its files in a Map. */
  class MapKeptStore implements KeptStore {
    readonly kind = 'opfs';
    readonly keepsFileShare = 1;
    readonly files = new Map<string, Uint8Array<ArrayBuffer>>();
    /** The parts given in pieces, by name. */
    readonly gathered: string[] = [];
    async read(place: KeptPlace, expect: KeptCheck | null) {
      const bytes = this.files.get(JSON.stringify(place));
      return bytes && (!expect || bytes.byteLength === expect.bytes) ? bytes.slice().buffer : null;
    }
    async write(place: KeptPlace, given: KeptBytes) {
      if (given instanceof GatheredBytes) this.gathered.push(place.part);
      const bytes = given instanceof GatheredBytes ? given.whole() : given.slice();
      this.files.set(JSON.stringify(place), bytes);
      return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.byteLength };
    }
    async remove(place: KeptPlace) {
      this.files.delete(JSON.stringify(place));
    }
  }

  /** `MapKeptStore` whose mounted parts are opened as parts on disk (the OPFS in the engine's worker), read from its Map; with `failing`, every read of them fails (a file cut short on disk). */
  class MapPartsStore extends MapKeptStore {
    readonly opened: PartOnDisk[] = [];
    closed = 0;
    failing = false;
    async open(place: KeptPlace, expect: KeptCheck | null) {
      const bytes = this.files.get(JSON.stringify(place));
      if (!bytes || (expect && bytes.byteLength !== expect.bytes)) return null;
      const part = new PartOnDisk({ read: (into, at) => (this.failing ? 0 : (into.set(bytes.subarray(at, at + into.byteLength)), Math.min(into.byteLength, bytes.byteLength - at))), close: () => void this.closed++ }, bytes.byteLength);
      this.opened.push(part);
      return part;
    }
  }

  it('in the OPFS, a return visit mounts the kept parts unread (parts on disk, read as onnxruntime asks) and closes them once the session exists', async () => {
    const opfs = new MapPartsStore();
    const first = await rewriteLoad(q4Sha, opfs);
    expect(first.rewrites).toBe(1);
    expect(opfs.opened).toHaveLength(0);
    const second = await rewriteLoad(q4Sha, opfs);
    expect(second.rewrites).toBe(0);
    const mounted = second.created.externalData;
    expect(mounted.map((f) => f.path)).toContain(KEPT_WEIGHTS);
    expect(mounted.every((f) => f.onDisk)).toBe(true);
    expect(opfs.opened).toHaveLength(mounted.length);
    expect(opfs.closed).toBe(mounted.length);
    expect(meaning(second.created)).toEqual(meaning(first.created));
  });

  it('where a part on disk cannot be read as the session asks, the session is created once more from the parts read whole: the same model', async () => {
    const opfs = new MapPartsStore();
    const first = await rewriteLoad(q4Sha, opfs);
    opfs.failing = true;
    const second = await rewriteLoad(q4Sha, opfs);
    expect(second.rewrites).toBe(0);
    expect(second.created.externalData.some((f) => f.onDisk)).toBe(false);
    expect(opfs.opened.length).toBeGreaterThan(0);
    expect(opfs.closed).toBe(opfs.opened.length);
    expect(meaning(second.created)).toEqual(meaning(first.created));
  });

  it('a rewrite an earlier engine kept in the model cache is deleted there once the OPFS holds it', async () => {
    const keptInCache = () => [...f.stores.get(MODEL_CACHE)!.keys()].filter((k) => k.includes('.jev-rewritten/'));
    expect((await rewriteLoad()).rewrites).toBe(1);
    const old = keptInCache();
    expect(old.length).toBeGreaterThanOrEqual(4);
    const opfs = new MapKeptStore();
    // Not read from the cache by an engine that keeps rewrites in the OPFS: made again, kept there, and the cache's copy goes.
    expect((await rewriteLoad(q4Sha, opfs)).rewrites).toBe(1);
    expect(keptInCache()).toEqual([]);
    for (const key of old) expect(await new IntegrityCache().records.get(key)).toBeNull();
    expect(opfs.files.size).toBe(old.length);
    expect((await rewriteLoad(q4Sha, opfs)).rewrites).toBe(0);
  });

  it('at fp32, where the graph reads most of the file: the OPFS keeps all it reads (written in pieces), the Cache API does not', async () => {
    const FP32_URL = 'http://host.test/m/resolve/main/onnx/model.onnx';
    const fp32 = () => new Uint8Array(readFileSync(join(GENERATED, TINY, 'onnx', 'model.onnx')));
    const fp32Sha = createHash('sha256').update(fp32()).digest('hex');
    const model = { url: FP32_URL, bytes: fp32, dtype: 'fp32' as const };
    const signature = rewriteSignature(rewritesOn('wasm', 'fp32'), true);
    // The model cache: what the graph reads is more than half the file, so the kept rewrite mounts the file.
    const cached = await rewriteLoad(fp32Sha, undefined, model);
    expect(cached.rewrites).toBe(1);
    const again = await rewriteLoad(fp32Sha, undefined, model);
    expect(again.rewrites).toBe(0);
    expect(again.created.externalData.map((f) => f.path)).toContain(INLINE_WEIGHTS);
    expect(await again.kept.complete({ url: FP32_URL, sha256: fp32Sha }, signature)).toBe(false);
    // The OPFS: all of it, as a part of its own, written from the file's own bytes in pieces.
    const opfs = new MapKeptStore();
    expect((await rewriteLoad(fp32Sha, opfs, model)).rewrites).toBe(1);
    expect(opfs.gathered).toEqual([KEPT_WEIGHTS]);
    const second = await rewriteLoad(fp32Sha, opfs, model);
    expect(second.rewrites).toBe(0);
    expect(await second.kept.complete({ url: FP32_URL, sha256: fp32Sha }, signature)).toBe(true);
    const paths = second.created.externalData.map((f) => f.path);
    expect(paths).not.toContain(INLINE_WEIGHTS);
    expect(paths).toContain(KEPT_WEIGHTS);
    const keptBytes = second.created.externalData.find((f) => f.path === KEPT_WEIGHTS)!.data.byteLength;
    expect(keptBytes).toBeGreaterThan(fp32().byteLength / 2);
    // The same model, every initializer the same bytes (read with an independent decoder), as the first load's.
    expect(meaning(second.created)).toEqual(meaning(again.created));
  });

  /** One load whose model file comes through the engine's fetch (model-fetch.ts) over the fake cache, from `h` where not stored. */
  async function fetchedLoad(h: { fn: () => Promise<Response>; requests: () => number }) {
    const created: Created[] = [];
    const factory = {
      create: async (graph: Uint8Array, options: { externalData?: { path: string; data: Uint8Array }[] }) => {
        created.push({ graph: graph.slice(), externalData: (options.externalData ?? []).map((f) => ({ path: f.path, data: f.data.slice() })) });
        return {};
      },
    };
    const handoff = new ModelHandoff();
    const fetcher = modelFetch(h.fn, new IntegrityCache(), () => handoff);
    const before = rewriteCalls.n;
    const reads = vi.spyOn(IntegrityCache.prototype, 'read');
    try {
      await withSessionRewrites(factory, async () => factory.create(new Uint8Array(await (await fetcher(MODEL_URL)).arrayBuffer()), {}), handoff, rewritesOn('wasm', 'q4'), null, new RewrittenGraphs());
      const manifestReads = reads.mock.calls.filter(([key]) => key.endsWith('/manifest.json')).length;
      return { created: created[0]!, rewrites: rewriteCalls.n - before, fileReads: reads.mock.calls.filter(([key]) => key === MODEL_URL).length, manifestReads };
    } finally {
      reads.mockRestore();
    }
  }

  function q4Host() {
    let requests = 0;
    const fn = async () => {
      requests++;
      const bytes = q4();
      return new Response(bytes, { status: 200, headers: { 'content-length': String(bytes.length), 'x-linked-etag': `"${q4Sha}"` } });
    };
    return { fn, requests: () => requests };
  }

  it('a return visit whose kept rewrite needs nothing of the file does not read the file: the same model, from the kept parts', async () => {
    const h = q4Host();
    const first = await fetchedLoad(h);
    expect(first.rewrites).toBe(1);
    expect(h.requests()).toBe(1);
    const second = await fetchedLoad(h);
    // The kept rewrite's manifest read once: asked whether it needs the file, then read with its parts.
    expect(second).toMatchObject({ rewrites: 0, fileReads: 0, manifestReads: 1 });
    expect(h.requests()).toBe(1);
    expect(meaning(second.created)).toEqual(meaning(first.created));
    expect(second.created.externalData.map((f) => f.path)).not.toContain(INLINE_WEIGHTS);
  });

  it('a kept part found damaged on a return visit that left the file unread: the file is read after all, and rewritten', async () => {
    const h = q4Host();
    const first = await fetchedLoad(h);
    const key = [...f.stores.get(MODEL_CACHE)!.keys()].find((k) => k.endsWith(`/${KEPT_WEIGHTS}`))!;
    const entry = f.stores.get(MODEL_CACHE)!.get(key)!;
    entry.body = entry.body.slice(0, entry.body.length - 64);
    entry.headers.set('x-jev-size', String(entry.body.length));
    const second = await fetchedLoad(h);
    expect(second).toMatchObject({ rewrites: 1, fileReads: 1 });
    expect(h.requests()).toBe(1);
    expect(meaning(second.created)).toEqual(meaning(first.created));
    // And kept again: the next visit reads nothing of the file.
    expect(await fetchedLoad(h)).toMatchObject({ rewrites: 0, fileReads: 0 });
  });

  it('the stored file gone from under its record on such a visit: read from the network after all', async () => {
    const h = q4Host();
    const first = await fetchedLoad(h);
    const key = [...f.stores.get(MODEL_CACHE)!.keys()].find((k) => k.endsWith(`/${KEPT_WEIGHTS}`))!;
    f.stores.get(MODEL_CACHE)!.delete(key);
    f.unreadable.add(MODEL_URL);
    const second = await fetchedLoad(h);
    expect(second.rewrites).toBe(1);
    expect(h.requests()).toBe(2);
    expect(meaning(second.created)).toEqual(meaning(first.created));
  });

  it('without the file\'s checked SHA-256 nothing is kept', async () => {
    await rewriteLoad('');
    expect((await rewriteLoad('')).rewrites).toBe(1);
    expect(f.stores.get(MODEL_CACHE)?.size ?? 0).toBe(0);
  });
});

/** What a session's graph means: its nodes, and each initializer's type, shape and bytes (read through its mounted files). */
function meaning(created: { graph: Uint8Array; externalData: { path: string; data: Uint8Array }[] }) {
  const files = new Map(created.externalData.map((f) => [f.path, f.data]));
  const graph = readGraph(created.graph, (location) => files.get(location) ?? null)!;
  const nodes = [...graph.nodes.values()].map((n) => ({ op: n.op, domain: n.domain, inputs: n.inputs, outputs: n.outputs, ints: [...n.ints] }));
  const tensors = [...graph.tensors].map(([name, t]) => ({ name, type: t.type, dims: t.dims, sha256: t.data ? createHash('sha256').update(t.data).digest('hex') : null }));
  return { nodes, tensors };
}

/**
 * The sources of what the rewrites write, by `REWRITE_VERSION`: a change to any of them changes
 * what a stored rewrite would hold. When this fails, bump REWRITE_VERSION (rewritten-graphs.ts) and
 * add the digest this prints under the new version.
 */
const REWRITE_SOURCES: Record<number, string> = {
  1: 'b8390e71e609ebd4fe19cce82f3589c626292d2ec5d3db82dea60125a6b58688',
  // 2026-12-02: the graph room gained Node's q4 rewrites (int8-accuracy.ts, nbits-head.ts) and exported two field numbers.
  2: '5e3aeb28958ff322e1cfbeba5246080cfe38662c17c602d9d074bc63c0906318',
  // 2026-12-02: a kept rewrite reads what it needs of the model's file from a part of its own (compact-external.ts).
  3: 'd372fbe3bca4f9ad629f873dfa5e327e6fac950bdb90ea65c984878f6cbb2261',
  // 2026-12-04: compact-external.ts plans the copy apart from making it (the same bytes); bumped so that an fp32 rewrite kept before is kept again whole in the OPFS.
  4: '27e23c93ec4bf55f0c5248e80fbcb4f2e22b7d887b92f3fc3eade423a41484d7',
  // 2026-12-04: the 8-bit products as QuantizeLinear and MatMulIntegerToFloat (fewer nodes), the head kernel scaling in their order.
  5: 'dea5c0eff69e1471b1e4c666237b0170b54c89396dd806a8342e99d9f187adc3',
  // 2026-12-05: every value's shape named in the graph's value_info (symbolic-shapes.ts, symbolic-dims.ts); the kernel head's embeddings input declared with its shape.
  6: '1bb33e2c71afa2b9159170d8f568748228abde52a05da086ac00ea0ff18d4946',
  // 2026-12-05 (later): the graph room gained step-outputs.ts, and nbits-head.ts reads external weights, both for Node's sessions only; what a page's kept rewrite holds is unchanged.
  7: '1028744a594f95fecba566bc2ba66a4470a279502bd5c56c8471d33ce05c5bf5',
};

it('REWRITE_VERSION is bumped with every change to the rewrites', () => {
  const files = [
    ...readdirSync(join(REPO, 'src/engine/graph')).filter((n) => n.endsWith('.ts')).map((n) => `src/engine/graph/${n}`),
    'src/engine/load/rewrite-session.ts',
    'src/engine/runtime/int8-head-kernel.ts',
  ].sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`${file}\n`).update(readFileSync(join(REPO, file), 'utf8').replace(/\r\n/g, '\n'));
  const digest = hash.digest('hex');
  expect(REWRITE_SOURCES[REWRITE_VERSION], `the rewrites' sources changed (digest ${digest}): bump REWRITE_VERSION and record the digest`).toBe(digest);
});
