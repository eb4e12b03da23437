import { Tensor } from '@huggingface/transformers';
import { emptyLike, type ElementArray } from '../runtime/float16.ts';
import { KvCache } from './kv-cache.ts';

/**
 * Several continuations' caches as the rows of one batched cache, so that one forward pass
 * advances all of them (an extraction's fields decoding side by side, decode-rows.ts).
 *
 * The rows are aligned at their ends: a row shorter than the batch starts with a gap of zeros,
 * and its `mask` is 0 over the gap and 1 where a position holds one of its tokens. A pass feeds
 * each row's next token at the end (RoPE position: the row's own count of tokens, given as
 * position_ids), so every row keeps its tokens contiguous, at the same distances from each other
 * and from the token being read as alone: what a sliding window measures (Gemma 3's local layers)
 * is unchanged. Only the gap is new, and the mask hides it.
 *
 * Only for caches held in CPU memory (GPU-resident tensors cannot be copied here): `stackRows`
 * returns null for any other. Every element is copied as it is stored (float32, or float16 in a
 * Float16Array or as Uint16Array bits), never converted.
 */
export interface CacheRows {
  cache: KvCache;
  /** Per row: the positions that hold its tokens (1) and its gap (0, at the start), `cache.length` long. */
  mask: Uint8Array[];
  /** Per row: how many tokens it has read (its next RoPE position). */
  positions: number[];
}

/** The caches (batch 1 each) as the rows of one batched cache; null where any tensor is not in CPU memory. The caches stay intact. */
export function stackRows(caches: readonly KvCache[]): CacheRows | null {
  const first = caches[0];
  if (!first) throw new Error('stackRows: no caches');
  const length = Math.max(...caches.map((c) => c.length));
  const out: Record<string, Tensor> = Object.create(null);
  for (const name of Object.keys(first.tensors)) {
    const sources = caches.map((c) => c.tensors[name]!);
    if (sources.some((t) => t.location !== 'cpu' || t.dims[0] !== 1)) {
      for (const made of Object.values(out)) made.dispose();
      return null;
    }
    const [, h, , d] = sources[0]!.dims as [number, number, number, number];
    const dst = emptyLike(sources[0]!.data as ElementArray, caches.length * h * length * d);
    for (const [r, t] of sources.entries()) {
      const seq = t.dims[2]!;
      const src = t.data as ElementArray;
      for (let head = 0; head < h; head++) {
        const to = ((r * h + head) * length + (length - seq)) * d;
        dst.set(src.subarray(head * seq * d, (head + 1) * seq * d) as never, to);
      }
    }
    out[name] = new Tensor(sources[0]!.type as 'float32', dst as never, [caches.length, h, length, d]);
  }
  const mask = caches.map((c) => {
    const m = new Uint8Array(length);
    m.fill(1, length - c.length);
    return m;
  });
  return { cache: new KvCache(out, length, first.ledger), mask, positions: caches.map((c) => c.length) };
}

/** The rows `keep` (in that order) of a batched cache, as a new one; the given one stays intact. */
export function selectRows(rows: CacheRows, keep: readonly number[]): CacheRows {
  const out: Record<string, Tensor> = Object.create(null);
  for (const [name, t] of Object.entries(rows.cache.tensors)) {
    const [, h, seq, d] = t.dims as [number, number, number, number];
    const src = t.data as ElementArray;
    const stride = h * seq * d;
    const dst = emptyLike(src, keep.length * stride);
    for (const [i, r] of keep.entries()) dst.set(src.subarray(r * stride, (r + 1) * stride) as never, i * stride);
    out[name] = new Tensor(t.type as 'float32', dst as never, [keep.length, h, seq, d]);
  }
  return {
    cache: new KvCache(out, rows.cache.length, rows.cache.ledger),
    mask: keep.map((r) => rows.mask[r]!),
    positions: keep.map((r) => rows.positions[r]!),
  };
}
