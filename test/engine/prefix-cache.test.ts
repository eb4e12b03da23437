// The prefix cache's radix tree (src/engine/model/prefix-cache.ts) against an independent brute-force
// model of the same policy: a plain list of stored sequences, searched by longest common prefix.
// Caches are real KvCache objects whose key tensor holds the token ids themselves, so a cache cut
// to a prefix can be checked element by element; a ledger counts every tensor left alive.
import { Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { KvCache } from '../../src/engine/model/kv-cache.ts';
import { defaultPrefixCacheBytes, PrefixCache } from '../../src/engine/model/prefix-cache.ts';
import { TensorLedger } from '../../src/engine/runtime/tensor-ledger.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** Two float32 tensors [1, 1, L, 1]: 8 bytes a token. */
const BYTES_PER_TOKEN = 8;

function cacheOf(ids: readonly number[], ledger: TensorLedger): KvCache {
  const key = new Tensor('float32', Float32Array.from(ids), [1, 1, ids.length, 1]);
  const value = new Tensor('float32', Float32Array.from(ids, (t) => t + 1000), [1, 1, ids.length, 1]);
  return new KvCache({ 'past_key_values.0.key': key, 'past_key_values.0.value': value }, ids.length, ledger);
}

function idsOf(cache: KvCache): number[] {
  const key = Array.from(cache.tensors['past_key_values.0.key']!.data as Float32Array);
  const value = Array.from(cache.tensors['past_key_values.0.value']!.data as Float32Array);
  expect(value).toEqual(key.map((t) => t + 1000));
  return key;
}

const lcp = (a: readonly number[], b: readonly number[]) => {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
};

/** The policy, written as a list: what the tree must do, found the slow way. */
class ListModel {
  entries: { ids: number[]; used: number }[] = [];
  clock = 0;
  hits = 0;
  misses = 0;
  cachedTokens = 0;
  evictions = 0;
  constructor(readonly maxBytes: number) {}

  get bytes() {
    return this.entries.reduce((n, e) => n + e.ids.length * BYTES_PER_TOKEN, 0);
  }

  #pick(candidates: { ids: number[]; used: number }[]) {
    return candidates.reduce((best, e) => (e.ids.length < best.ids.length || (e.ids.length === best.ids.length && e.used > best.used) ? e : best));
  }

  take(ids: number[], limit: number): number | null {
    const lim = Math.min(limit, ids.length);
    const m = this.entries.reduce((best, e) => Math.max(best, Math.min(lcp(e.ids, ids), lim)), 0);
    if (m === 0) {
      this.misses++;
      return null;
    }
    this.hits++;
    this.cachedTokens += m;
    const exact = this.entries.find((e) => e.ids.length === m && lcp(e.ids, ids) >= m);
    if (exact) this.entries = this.entries.filter((e) => e !== exact);
    else this.#pick(this.entries.filter((e) => lcp(e.ids, ids) >= m)).used = ++this.clock;
    return m;
  }

  put(ids: number[]): void {
    if (ids.length === 0 || ids.length * BYTES_PER_TOKEN > this.maxBytes) return;
    const same = this.entries.find((e) => e.ids.length === ids.length && lcp(e.ids, ids) === ids.length);
    if (same) return void (same.used = ++this.clock);
    const longer = this.entries.filter((e) => e.ids.length > ids.length && lcp(e.ids, ids) === ids.length);
    if (longer.length > 0) return void (this.#pick(longer).used = ++this.clock);
    const entry = { ids: [...ids], used: ++this.clock };
    this.entries = this.entries.filter((e) => !(e.ids.length < ids.length && lcp(e.ids, ids) === e.ids.length));
    this.entries.push(entry);
    while (this.bytes > this.maxBytes) {
      const others = this.entries.filter((e) => e !== entry);
      const victim = others.length > 0 ? others.reduce((a, b) => (b.used < a.used ? b : a)) : entry;
      this.entries = this.entries.filter((e) => e !== victim);
      this.evictions++;
    }
  }

  sequences() {
    return [...this.entries].sort((a, b) => a.used - b.used).map((e) => e.ids);
  }
}

describe('prefix cache: the radix tree against a list of stored sequences', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`seed ${seed}: 3,000 random takes and puts over a 3-token alphabet (many shared prefixes) give the list's answers`, () => {
      const random = seededRandom(seed);
      const int = (n: number) => Math.floor(random() * n);
      const budget = BYTES_PER_TOKEN * (20 + int(40));
      const ledger = new TensorLedger();
      const tree = new PrefixCache(budget);
      const list = new ListModel(budget);
      const sequence = () => Array.from({ length: 1 + int(12) }, () => 1 + int(3));
      for (let step = 0; step < 3000; step++) {
        const ids = sequence();
        if (random() < 0.5) {
          const limit = random() < 0.5 ? ids.length : ids.length - 1;
          const got = tree.take(ids, limit);
          const want = list.take(ids, limit);
          expect(got?.reused ?? null, `step ${step}: take ${ids} (limit ${limit})`).toBe(want);
          if (got) {
            expect(got.cache.length).toBe(got.reused);
            expect(idsOf(got.cache)).toEqual(ids.slice(0, got.reused));
            // Either the request fails and gives back what it took, or it extends it to all its tokens.
            if (random() < 0.3) {
              tree.put(ids.slice(0, got.reused), got.cache);
              list.put(ids.slice(0, got.reused));
            } else {
              got.cache.dispose();
              tree.put(ids, cacheOf(ids, ledger));
              list.put(ids);
            }
          }
        } else {
          tree.put(ids, cacheOf(ids, ledger));
          list.put(ids);
        }
        expect(tree.sequences(), `step ${step}: stored sequences, least recently used first`).toEqual(list.sequences());
        const c = tree.counters();
        expect(c).toEqual({
          entries: list.entries.length,
          tokens: list.entries.reduce((n, e) => n + e.ids.length, 0),
          bytes: list.bytes,
          maxBytes: budget,
          hits: list.hits,
          misses: list.misses,
          cachedTokens: list.cachedTokens,
          evictions: list.evictions,
        });
        expect(c.bytes).toBeLessThanOrEqual(budget);
        // Nothing leaks and nothing is freed twice: the live tensors are the stored caches'.
        expect(ledger.live, `step ${step}: live tensors`).toBe(2 * c.entries);
      }
      expect(list.hits).toBeGreaterThan(500);
      expect(list.evictions).toBeGreaterThan(50);
      tree.clear();
      expect(ledger.live).toBe(0);
      expect(tree.counters().entries).toBe(0);
    });
  }

  it('a prefix stored inside a longer sequence is cut out of it as a copy; the longer one stays', () => {
    const ledger = new TensorLedger();
    const tree = new PrefixCache(1 << 20);
    tree.put([1, 2, 3, 4, 5], cacheOf([1, 2, 3, 4, 5], ledger));
    const got = tree.take([1, 2, 3, 9])!;
    expect(got.reused).toBe(3);
    expect(idsOf(got.cache)).toEqual([1, 2, 3]);
    expect(tree.sequences()).toEqual([[1, 2, 3, 4, 5]]);
    got.cache.dispose();
    // The whole sequence, exactly: the cache itself is handed over and leaves the tree.
    const whole = tree.take([1, 2, 3, 4, 5])!;
    expect(whole.reused).toBe(5);
    expect(tree.sequences()).toEqual([]);
    // …unless the caller must still feed a token.
    tree.put([1, 2, 3, 4, 5], whole.cache);
    const leaving = tree.take([1, 2, 3, 4, 5], 4)!;
    expect(leaving.reused).toBe(4);
    expect(tree.sequences()).toEqual([[1, 2, 3, 4, 5]]);
    leaving.cache.dispose();
    tree.clear();
    expect(ledger.live).toBe(0);
  });

  it('a cache larger than the whole budget is not kept; a disposed or mislabelled one is refused', () => {
    const ledger = new TensorLedger();
    const tree = new PrefixCache(3 * BYTES_PER_TOKEN);
    tree.put([1, 2, 3, 4], cacheOf([1, 2, 3, 4], ledger));
    expect(tree.counters().entries).toBe(0);
    expect(ledger.live).toBe(0);
    const c = cacheOf([1, 2], ledger);
    expect(() => tree.put([1, 2, 3], c)).toThrow(/3 token ids for a 2-token cache/);
    c.dispose();
    expect(() => tree.put([1, 2], c)).toThrow(/already disposed/);
    expect(() => new PrefixCache(-1)).toThrow(/budget/);
  });

  it('shrink() under memory pressure drops everything and counts it; reset() also zeroes the counters', () => {
    const ledger = new TensorLedger();
    const tree = new PrefixCache(1 << 20);
    tree.put([1, 2, 3], cacheOf([1, 2, 3], ledger));
    tree.put([3, 4], cacheOf([3, 4], ledger));
    tree.take([1, 2, 7])!.cache.dispose(); // a copy cut from [1, 2, 3]: both stay
    expect(tree.shrink()).toBe(true);
    expect(tree.shrink()).toBe(false);
    expect(tree.counters()).toMatchObject({ entries: 0, bytes: 0, evictions: 2, hits: 1 });
    expect(ledger.live).toBe(0);
    tree.reset();
    expect(tree.counters()).toMatchObject({ hits: 0, misses: 0, cachedTokens: 0, evictions: 0 });
  });

  it('the default budget is a sixteenth of the device memory, within 32–256 MiB', () => {
    const MiB = 1024 * 1024;
    expect(defaultPrefixCacheBytes(undefined)).toBe(256 * MiB);
    expect(defaultPrefixCacheBytes(8)).toBe(256 * MiB);
    expect(defaultPrefixCacheBytes(2)).toBe(128 * MiB);
    expect(defaultPrefixCacheBytes(0.25)).toBe(32 * MiB);
  });
});
