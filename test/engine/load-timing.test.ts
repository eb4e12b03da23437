/**
 * The load's timing recorder (src/engine/load/load-timing.ts) on a hand-driven clock: overlapping
 * spans count each instant once, for the more specific phase, and the phases add up to the total;
 * the engine's fetch marks storage reads, hashing and downloads, and counts the bytes of each; a
 * Node load of a generated model reports every phase in `status().lastLoad`.
 */
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LOAD_PHASES, LoadTimer, timingWasm } from '../../src/engine/load/load-timing.ts';
import { IntegrityCache } from '../../src/engine/load/storage/integrity-cache.ts';
import { modelFetch } from '../../src/engine/load/model-fetch.ts';
import { pattern } from '../support/byte-source.ts';
import { fakeCaches, fakeStorage } from '../support/fake-cache-storage.ts';
import { loadEngine, testModels } from '../support/models.ts';

/** A clock that moves 1 ms each time it is read: every span marked lasts at least that. */
function ticking() {
  let t = 0;
  return () => ++t;
}

/** A clock that moves only when told. */
function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

const sum = (phases: Record<string, number>) => Object.values(phases).reduce((a, b) => a + b, 0);

describe('LoadTimer', () => {
  it('sequential spans: each phase its own time, the gaps as other', () => {
    const c = clock();
    const timer = new LoadTimer(c.now);
    c.advance(5); // before any phase
    const tok = timer.begin('tokenizer');
    c.advance(20);
    tok();
    const ses = timer.begin('session');
    c.advance(100);
    ses();
    c.advance(7);
    const r = timer.report();
    expect(r.totalMs).toBe(132);
    expect(r.phases).toMatchObject({ tokenizer: 20, session: 100, other: 12, wasm: 0, storageRead: 0 });
    expect(sum(r.phases)).toBe(132);
  });

  it('nested and overlapping spans count an instant once, for the more specific phase', () => {
    const c = clock();
    const timer = new LoadTimer(c.now);
    const session = timer.begin('session'); // 0..100
    c.advance(10);
    const wasm = timer.begin('wasm'); // 10..60
    c.advance(20);
    const read = timer.begin('storageRead'); // 30..80, overlapping wasm and outliving it
    c.advance(30);
    wasm();
    c.advance(20);
    read();
    c.advance(20);
    session();
    const r = timer.report();
    // storageRead outranks wasm, which outranks session (LOAD_PHASES' order).
    expect(r.phases).toMatchObject({ storageRead: 50, wasm: 20, session: 30, other: 0 });
    expect(r.totalMs).toBe(100);
    expect(sum(r.phases)).toBe(r.totalMs);
    // Each phase's own length, whatever ran beside it: wasm 10..60, the read 30..80, the session 0..100.
    expect(r.running).toMatchObject({ wasm: 50, storageRead: 50, session: 100, download: 0 });
  });

  it('two reads at once are not counted twice; a span never ended is left out', () => {
    const c = clock();
    const timer = new LoadTimer(c.now);
    const a = timer.begin('download');
    c.advance(10);
    const b = timer.begin('download');
    c.advance(30);
    a();
    c.advance(10);
    b();
    timer.begin('rewrites'); // never ended (a failed step)
    c.advance(15);
    const r = timer.report();
    expect(r.phases.download).toBe(50);
    expect(r.running.download).toBe(50); // 0..40 and 10..50: their union, not 70
    expect(r.phases.rewrites).toBe(0);
    expect(r.running.rewrites).toBe(0);
    expect(r.phases.other).toBe(15);
    expect(r.totalMs).toBe(65);
  });

  it('time() ends its span when the work fails, and passes the failure on', async () => {
    const c = clock();
    const timer = new LoadTimer(c.now);
    await expect(
      timer.time('tokenizer', async () => {
        c.advance(8);
        throw new Error('no tokenizer');
      }),
    ).rejects.toThrow('no tokenizer');
    c.advance(2);
    expect(timer.report().phases).toMatchObject({ tokenizer: 8, other: 2 });
  });

  it('fromCache only where bytes came from the cache and none from the network', () => {
    const t = new LoadTimer();
    expect(t.report()).toMatchObject({ bytesFetched: 0, fromCache: false });
    t.cached(10);
    expect(t.report().fromCache).toBe(true);
    t.fetched(5);
    expect(t.report()).toMatchObject({ bytesFetched: 5, fromCache: false });
  });

  it('timingWasm times WebAssembly compiles as wasm, and restores WebAssembly.compile after', async () => {
    const original = WebAssembly.compile;
    const timer = new LoadTimer(ticking());
    // The smallest valid module: magic and version.
    const empty = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
    const module = await timingWasm(timer, () => WebAssembly.compile(empty));
    expect(module).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.compile).toBe(original);
    // A span was recorded as wasm, and no other phase.
    const r = timer.report();
    expect(r.phases.wasm).toBeGreaterThan(0);
    expect(r.phases.wasm + r.phases.other).toBe(r.totalMs);
    // Outside timingWasm nothing is timed.
    await WebAssembly.compile(empty);
    expect(timer.report().phases.wasm).toBe(r.phases.wasm);
  });
});

describe('the engine fetch marks its reads', () => {
  const URL_ = 'http://host.test/m/resolve/main/onnx/model.onnx';
  const file = pattern(300_000, 3);
  const sha = createHash('sha256').update(file).digest('hex');
  const host = async () => new Response(file.slice(), { status: 200, headers: { 'content-length': String(file.length), 'x-linked-etag': `"${sha}"` } });

  beforeEach(() => {
    const f = fakeCaches();
    vi.stubGlobal('caches', f.caches);
    vi.stubGlobal('navigator', fakeStorage(f, 1e9));
  });
  afterEach(() => vi.unstubAllGlobals());

  it('a first read downloads (bytes fetched, hashed to store); a second reads the cache (hashed to check, fromCache)', async () => {
    const cache = new IntegrityCache();
    const first = new LoadTimer(ticking());
    const body1 = new Uint8Array(await (await modelFetch(host, cache, () => null, first)(URL_)).arrayBuffer());
    expect(body1.length).toBe(file.length);
    const r1 = first.report();
    expect(r1.bytesFetched).toBe(file.length);
    expect(r1.fromCache).toBe(false);
    expect(r1.phases.download).toBeGreaterThan(0);
    expect(r1.phases.integrity).toBeGreaterThan(0); // the hash checked before storing

    let asked = 0;
    const second = new LoadTimer(ticking());
    const counting = async () => {
      asked++;
      return host();
    };
    const body2 = new Uint8Array(await (await modelFetch(counting, cache, () => null, second)(URL_)).arrayBuffer());
    expect(Buffer.from(body2).equals(Buffer.from(file))).toBe(true);
    expect(asked).toBe(0);
    const r2 = second.report();
    expect(r2).toMatchObject({ bytesFetched: 0, fromCache: true });
    expect(r2.phases.download).toBe(0);
    expect(r2.phases.storageRead).toBeGreaterThan(0);
    expect(r2.phases.integrity).toBeGreaterThan(0); // the stored hash checked on the read
    expect(sum(r2.phases)).toBeCloseTo(r2.totalMs, 0);
  });
});

for (const m of testModels().slice(0, 1)) {
  describe.skipIf(!m.present)(`status().lastLoad after a load of ${m.id}`, () => {
    it('names every phase, adds up to the total, and the session took time', async () => {
      const engine = await loadEngine(m.root, m.id);
      try {
        const last = (await engine.status()).lastLoad!;
        expect(Object.keys(last.phases).sort()).toEqual([...LOAD_PHASES, 'other'].sort());
        expect(last.totalMs).toBeGreaterThan(0);
        expect(Math.abs(sum(last.phases) - last.totalMs)).toBeLessThanOrEqual(1);
        expect(last.phases.session).toBeGreaterThan(0);
        expect(last.phases.tokenizer).toBeGreaterThan(0);
        expect(last.phases.firstPass).toBeGreaterThan(0);
      } finally {
        await engine.languageModel?.dispose();
      }
    });
  });
}
