import { Tensor } from '@huggingface/transformers';
import { emptyLike, type ElementArray } from '../../src/engine/runtime/float16.ts';
import { KvCache } from '../../src/engine/model/kv-cache.ts';
import type { CacheRows } from '../../src/engine/model/kv-rows.ts';

/**
 * The rows `keep` (in that order) of a batched cache, copied into a new one; the given one stays
 * intact. The independent copy that `keepRows` (src/engine/model/kv-rows.ts), which keeps rows in
 * place, is checked against.
 */
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
    used: rows.used,
  };
}
