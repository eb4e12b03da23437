import type { KvCache } from './kv-cache.ts';
import type { LanguageModel } from './language-model.ts';
import type { Tensor } from '@huggingface/transformers';
import type { PrefixCacheStatus } from '../../protocol/engine-api.ts';

/**
 * The key/value caches of earlier requests, kept across requests so that a request whose tokens
 * begin like an earlier one's (the same state asked again, the same system prompt, the next turn
 * of a conversation) feeds only the rest. A radix tree over token ids, as SGLang's RadixAttention
 * and vLLM's automatic prefix caching keep theirs: each stored cache hangs at the node where its
 * token sequence ends, and a lookup walks the request's tokens down the tree.
 *
 * - `take(ids)` gives the longest cached prefix of `ids`: a stored cache cut to the match (a copy;
 *   the stored one stays) or, where a stored sequence is exactly that prefix, the stored cache
 *   itself, taken out of the tree. Either way the caller owns what it gets: it disposes it or
 *   gives it back with `put`.
 * - `put(ids, cache)` stores a cache whose tokens are `ids` (ownership passes to the tree). A
 *   sequence that a stored longer one begins with is not stored again (cutting gives it back);
 *   stored sequences that the new one begins with are dropped for the same reason. Caches the
 *   engine cannot cut (GPU-resident tensors: `KvCache.truncated` returns null) are kept apart
 *   from that rule, since only a whole one can be reused.
 * - A byte budget (`KvCache.bytes`): past it the least recently used caches go first.
 *
 * Requests are served one at a time, so nothing here is used concurrently.
 */
interface Entry {
  node: Node;
  ids: number[];
  cache: KvCache;
  /** Whether `cache.truncated` works on it (CPU-resident); learned the first time it is cut. */
  cuttable: boolean;
  used: number;
}

interface Node {
  /** The tokens on the edge from the parent to this node (empty only at the root). */
  edge: number[];
  parent: Node | null;
  children: Map<number, Node>;
  entry: Entry | null;
}

/** The budget where none is configured: a sixteenth of the device's memory, within 32–256 MiB. */
export function defaultPrefixCacheBytes(deviceMemoryGiB: number | undefined): number {
  const MiB = 1024 * 1024;
  if (!deviceMemoryGiB || !Number.isFinite(deviceMemoryGiB) || deviceMemoryGiB <= 0) return 256 * MiB;
  return Math.min(256 * MiB, Math.max(32 * MiB, Math.floor((deviceMemoryGiB * 1024 * MiB) / 16)));
}

export class PrefixCache {
  #root: Node = newNode([], null);
  readonly #entries = new Set<Entry>();
  #clock = 0;
  #bytes = 0;
  #hits = 0;
  #misses = 0;
  #cachedTokens = 0;
  #evictions = 0;

  constructor(public maxBytes: number) {
    if (!(maxBytes >= 0)) throw new Error(`prefix cache budget must be ≥ 0 bytes, not ${maxBytes}`);
  }

  /**
   * The longest cached prefix of `ids`, at most `limit` tokens of it (a caller that must still
   * feed a token passes `ids.length - 1`). Null when nothing reusable is held: then the caller
   * starts from an empty cache. Counts a hit or a miss.
   */
  take(ids: readonly number[], limit = ids.length): { cache: KvCache; reused: number } | null {
    const found = this.#find(ids, Math.min(limit, ids.length));
    if (!found) {
      this.#misses++;
      return null;
    }
    this.#hits++;
    this.#cachedTokens += found.reused;
    return found;
  }

  #find(ids: readonly number[], limit: number): { cache: KvCache; reused: number } | null {
    if (limit <= 0) return null;
    // Walk down: `node` is the deepest node whose whole edge matches, `matched` the tokens matched
    // in all (which may end inside the edge of `below`, the next node down).
    let node = this.#root;
    let matched = 0;
    let below: Node | null = null;
    const path: Node[] = [];
    while (matched < limit) {
      const child = node.children.get(ids[matched]!);
      if (!child) break;
      let k = 0;
      while (k < child.edge.length && matched + k < limit && child.edge[k] === ids[matched + k]) k++;
      if (k < child.edge.length) {
        matched += k;
        below = child;
        break;
      }
      matched += k;
      node = child;
      path.push(node);
    }
    if (matched === 0) return null;
    // An entry that ends exactly at the match: the cache itself, taken out of the tree.
    if (!below && node.entry) {
      const entry = node.entry;
      this.#remove(entry);
      return { cache: entry.cache, reused: matched };
    }
    // Else cut a stored cache that runs through the match point down to it (a copy).
    const source = nearestEntry(below ?? node);
    if (source && source.cuttable) {
      const cut = source.cache.truncated(matched);
      if (cut) {
        source.used = ++this.#clock;
        return { cache: cut, reused: matched };
      }
      source.cuttable = false;
    }
    // Caches that cannot be cut: the deepest whole stored sequence on the path.
    for (let i = path.length - 1; i >= 0; i--) {
      const entry = path[i]!.entry;
      if (entry) {
        this.#remove(entry);
        return { cache: entry.cache, reused: entry.ids.length };
      }
    }
    return null;
  }

  /**
   * Stores `cache`, whose tokens are `ids`; the tree owns it from now on (it may dispose it at once).
   * True where it was stored as a new entry; false where it was too large, or held already (the
   * same tokens, or a longer cached prompt that begins with them).
   */
  put(ids: readonly number[], cache: KvCache): boolean {
    if (cache.disposed) throw new Error('prefix cache: the cache was already disposed');
    if (ids.length !== cache.length) throw new Error(`prefix cache: ${ids.length} token ids for a ${cache.length}-token cache`);
    if (ids.length === 0 || cache.bytes > this.maxBytes) {
      cache.dispose();
      return false;
    }
    // Down the tree, splitting an edge where the sequence leaves it.
    let node = this.#root;
    let at = 0;
    while (at < ids.length) {
      const child = node.children.get(ids[at]!);
      if (!child) {
        const leaf = newNode(ids.slice(at), node);
        node.children.set(ids[at]!, leaf);
        node = leaf;
        at = ids.length;
        break;
      }
      let k = 0;
      while (k < child.edge.length && at + k < ids.length && child.edge[k] === ids[at + k]) k++;
      node = k < child.edge.length ? split(child, k) : child;
      at += k;
    }
    const existing = node.entry;
    if (existing) {
      // The same sequence again: keep one cache of it.
      existing.used = ++this.#clock;
      if (existing.cache !== cache) cache.dispose();
      return false;
    }
    // A longer stored sequence that begins with this one gives it back by cutting.
    const longer = nearestEntry(node);
    if (longer && longer.cuttable && isCpu(cache)) {
      longer.used = ++this.#clock;
      cache.dispose();
      this.#prune(node);
      return false;
    }
    const entry: Entry = { node, ids: [...ids], cache, cuttable: isCpu(cache), used: ++this.#clock };
    node.entry = entry;
    this.#entries.add(entry);
    this.#bytes += cache.bytes;
    // Stored sequences this one begins with are now redundant (where this one can be cut).
    if (entry.cuttable) {
      for (let up = node.parent; up; up = up.parent) if (up.entry) this.#drop(up.entry);
    }
    this.#fit(entry);
    return true;
  }

  /** Drops every cache. */
  clear(): void {
    for (const entry of [...this.#entries]) this.#drop(entry);
    this.#root = newNode([], null);
  }

  /** Frees memory under pressure: drops every cache (counted as evictions); true if it held any. */
  shrink(): boolean {
    const held = this.#entries.size;
    this.clear();
    this.#evictions += held;
    return held > 0;
  }

  /** Drops every cache and zeroes the counters (a new model is loaded). */
  reset(): void {
    this.clear();
    this.#hits = this.#misses = this.#cachedTokens = this.#evictions = 0;
  }

  /** The counters, and the cache's present size. */
  counters(): PrefixCacheStatus {
    let tokens = 0;
    for (const e of this.#entries) tokens += e.ids.length;
    return {
      entries: this.#entries.size,
      tokens,
      bytes: this.#bytes,
      maxBytes: this.maxBytes,
      hits: this.#hits,
      misses: this.#misses,
      cachedTokens: this.#cachedTokens,
      evictions: this.#evictions,
    };
  }

  /** The stored sequences, least recently used first (for tests and the cache view). */
  sequences(): number[][] {
    return [...this.#entries].sort((a, b) => a.used - b.used).map((e) => [...e.ids]);
  }

  /** Evicts least recently used caches (never `keep` while others remain) until within budget. */
  #fit(keep: Entry): void {
    while (this.#bytes > this.maxBytes && this.#entries.size > 0) {
      let victim: Entry | null = null;
      for (const e of this.#entries) if (e !== keep && (!victim || e.used < victim.used)) victim = e;
      victim ??= keep;
      this.#drop(victim);
      this.#evictions++;
    }
  }

  /** Takes an entry out of the tree without disposing its cache (its new owner does). */
  #remove(entry: Entry): void {
    entry.node.entry = null;
    this.#entries.delete(entry);
    this.#bytes -= entry.cache.bytes;
    this.#prune(entry.node);
  }

  #drop(entry: Entry): void {
    this.#remove(entry);
    entry.cache.dispose();
  }

  /** Removes nodes that hold nothing and lead nowhere, and merges a node left with one child into it. */
  #prune(node: Node): void {
    let n: Node | null = node;
    while (n && n.parent && !n.entry && n.children.size === 0) {
      const parent: Node = n.parent;
      parent.children.delete(n.edge[0]!);
      n = parent;
    }
    if (n && n.parent && !n.entry && n.children.size === 1) {
      const only = [...n.children.values()][0]!;
      only.edge = [...n.edge, ...only.edge];
      only.parent = n.parent;
      n.parent.children.set(only.edge[0]!, only);
    }
  }
}

function newNode(edge: number[], parent: Node | null): Node {
  return { edge, parent, children: new Map(), entry: null };
}

/** Splits `node`'s edge after `k` tokens: a new node takes the first `k` and `node`, with the rest, hangs below it. */
function split(node: Node, k: number): Node {
  const parent = node.parent!;
  const head = newNode(node.edge.slice(0, k), parent);
  parent.children.set(head.edge[0]!, head);
  node.edge = node.edge.slice(k);
  node.parent = head;
  head.children.set(node.edge[0]!, node);
  return head;
}

/** The stored entry in `node`'s subtree (itself included) with the fewest tokens, the cheapest to cut; of equals, the most recently used. */
function nearestEntry(node: Node): Entry | null {
  let best: Entry | null = null;
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    const e = n.entry;
    if (e && (!best || e.ids.length < best.ids.length || (e.ids.length === best.ids.length && e.used > best.used))) best = e;
    for (const c of n.children.values()) stack.push(c);
  }
  return best;
}

function isCpu(cache: KvCache): boolean {
  return Object.values(cache.tensors).every((t) => t.location === 'cpu');
}

/** The cache to continue `ids` from: the longest held prefix (at most `limit` tokens), else an empty cache. The caller owns it. */
export function startFrom(prefixes: PrefixCache | null, lm: LanguageModel, ids: readonly number[], limit: number): { cache: KvCache; reused: number } {
  return prefixes?.take(ids, limit) ?? { cache: lm.emptyCache(), reused: 0 };
}

/** Hands a cache whose tokens are `ids` to `prefixes` for later requests (or disposes it where there is none); true where it was stored anew. */
export function keepCache(prefixes: PrefixCache | null, ids: readonly number[], cache: KvCache): boolean {
  if (prefixes) return prefixes.put(ids, cache);
  cache.dispose();
  return false;
}

/**
 * One forward pass feeding `rest` after the cache `start` (whose tokens are `held`), returning the
 * last position's logits and the longer cache. `start` is consumed: disposed once the pass has
 * read it, or given back to `prefixes` if the pass fails, so that a failed request loses nothing.
 */
export async function continueFrom(
  prefixes: PrefixCache | null,
  lm: LanguageModel,
  start: { cache: KvCache },
  held: readonly number[],
  rest: readonly number[],
): Promise<{ logits: Tensor; cache: KvCache }> {
  let pass: { logits: Tensor; cache: KvCache };
  try {
    pass = await lm.forward(rest, start.cache, 1);
  } catch (e) {
    keepCache(prefixes, held, start.cache);
    throw e;
  }
  start.cache.dispose();
  return pass;
}
