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
  /** The batch's tensors, `[rows, heads, cache.length, head dim]`. Owned by the rows: a pass over rows with room writes into them. */
  cache: KvCache;
  /** Per row: the positions that hold its tokens (1), its gap (0, at the start) and the room (0, at the end), `cache.length` long. */
  mask: Uint8Array[];
  /** Per row: how many tokens it has read (its next RoPE position). */
  positions: number[];
  /**
   * The positions in use: every row's last token is at `used - 1`. From there to `cache.length`
   * is room (`stackRows`' `room`), masked, which a pass fills in place where the model can
   * (LanguageModel.forwardRows, `writeStep`); `cache.length` where there is none.
   */
  used: number;
}

/**
 * The caches (batch 1 each) as the rows of one batched cache, after the rows of `onto` where it is
 * given (fields joining a batch that is already decoding: decode-rows.ts); null where any tensor is
 * not in CPU memory. The batch is as long as its longest row, and every row is aligned at its end:
 * a row of `onto` keeps its tokens and its position, with a gap longer by what the batch grew.
 * `room` masked positions follow (`CacheRows.used`), for passes that write in place. The caches and
 * `onto` stay intact.
 */
export function stackRows(caches: readonly KvCache[], onto: CacheRows | null = null, room = 0): CacheRows | null {
  const first = onto?.cache ?? caches[0];
  if (!first) throw new Error('stackRows: no caches');
  const before = onto?.mask.length ?? 0;
  const used = Math.max(onto?.used ?? 0, ...caches.map((c) => c.length));
  const length = used + room;
  const out: Record<string, Tensor> = Object.create(null);
  for (const name of Object.keys(first.tensors)) {
    const base = onto?.cache.tensors[name];
    const sources = caches.map((c) => c.tensors[name]!);
    if (sources.some((t) => t.location !== 'cpu' || t.dims[0] !== 1) || (base && base.location !== 'cpu')) {
      for (const made of Object.values(out)) made.dispose();
      return null;
    }
    const like = (base ?? sources[0]!) as Tensor;
    const [, h, , d] = like.dims as [number, number, number, number];
    const dst = emptyLike(like.data as ElementArray, (before + caches.length) * h * length * d);
    // The first `seq` positions of a row `stride` positions long, per head, from `src` at (row, head) to the end of the batch's used positions.
    const place = (src: ElementArray, srcRow: number, stride: number, seq: number, dstRow: number) => {
      for (let head = 0; head < h; head++) {
        const from = (srcRow * h + head) * stride * d;
        dst.set(src.subarray(from, from + seq * d) as never, ((dstRow * h + head) * length + (used - seq)) * d);
      }
    };
    if (base) for (let r = 0; r < before; r++) place(base.data as ElementArray, r, base.dims[2]!, onto!.used, r);
    for (const [r, t] of sources.entries()) place(t.data as ElementArray, 0, t.dims[2]!, t.dims[2]!, before + r);
    out[name] = new Tensor(like.type as 'float32', dst as never, [before + caches.length, h, length, d]);
  }
  const grown = used - (onto?.used ?? 0);
  const mask = [
    ...(onto?.mask ?? []).map((m) => {
      const wider = new Uint8Array(length);
      wider.set(m.subarray(0, onto!.used), grown);
      return wider;
    }),
    ...caches.map((c) => {
      const m = new Uint8Array(length);
      m.fill(1, used - c.length, used);
      return m;
    }),
  ];
  return { cache: new KvCache(out, length, first.ledger), mask, positions: [...(onto?.positions ?? []), ...caches.map((c) => c.length)], used };
}

/**
 * Writes a pass's new keys and values for the cache input `name` (`step`: `[rows, heads, 1, head
 * dim]`, graph/step-outputs.ts) into the first free position of the rows' room, in place. The
 * caller then marks that position in each row's mask and counts it in `used`.
 */
export function writeStep(rows: CacheRows, name: string, step: Tensor): void {
  const t = rows.cache.tensors[name];
  if (!t || t.location !== 'cpu' || step.location !== 'cpu') throw new Error(`writeStep: ${name} is not in CPU memory`);
  const [n, h, length, d] = t.dims as [number, number, number, number];
  if (rows.used >= length) throw new Error(`writeStep: no room left in ${length} positions`);
  const [sn, sh, one, sd] = step.dims as [number, number, number, number];
  if (sn !== n || sh !== h || one !== 1 || sd !== d) throw new Error(`writeStep: ${name}'s step is ${step.dims.join('×')}, the rows ${n}×${h}×${length}×${d}`);
  const dst = t.data as ElementArray;
  const src = step.data as ElementArray;
  for (let rh = 0; rh < n * h; rh++) dst.set(src.subarray(rh * d, (rh + 1) * d) as never, (rh * length + rows.used) * d);
}

/**
 * The rows `keep` (ascending) of a batched cache, which this consumes (`rows.cache` must not be
 * used or disposed again), as a copy of them would hold them, but in place. The kept rows are moved down over the
 * dropped ones in the tensors' own memory, and the new cache's tensors are views of its first
 * rows, holding the old tensors until it is disposed. So dropping a finished field allocates
 * nothing and copies only the rows after the first dropped one. A pass's outputs in onnxruntime-web's
 * wasm memory (resident-outputs.ts) stay there, and go on to the next pass by pointer: a view
 * starts where its tensor does.
 */
export function keepRows(rows: CacheRows, keep: readonly number[]): CacheRows {
  for (let i = 1; i < keep.length; i++) if (keep[i]! <= keep[i - 1]!) throw new Error(`keepRows: rows ${keep.join(', ')} are not ascending`);
  const { cache } = rows;
  if (Object.values(cache.tensors).some((t) => t.location !== 'cpu')) throw new Error('keepRows: the rows are not in CPU memory');
  const out: Record<string, Tensor> = Object.create(null);
  for (const [name, t] of Object.entries(cache.tensors)) {
    const [, h, seq, d] = t.dims as [number, number, number, number];
    const data = t.data as ElementArray;
    const stride = h * seq * d;
    // keep[i] ≥ i, and rising: each row moves down to a slot no later row still has to be read from.
    for (const [i, r] of keep.entries()) if (r !== i) data.copyWithin(i * stride, r * stride, (r + 1) * stride);
    out[name] = new Tensor(t.type as 'float32', data.subarray(0, keep.length * stride) as never, [keep.length, h, seq, d]);
  }
  const length = cache.length;
  const ledger = cache.ledger;
  return {
    cache: new KvCache(out, length, ledger, cache.release()),
    mask: keep.map((r) => rows.mask[r]!),
    positions: keep.map((r) => rows.positions[r]!),
    used: rows.used,
  };
}
