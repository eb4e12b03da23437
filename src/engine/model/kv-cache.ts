import { Tensor } from '@huggingface/transformers';
import { emptyLike, float16Array, type ElementArray } from '../runtime/float16.ts';
import type { TensorLedger } from '../runtime/tensor-ledger.ts';

/**
 * The key/value tensors of a prefix the model has already read, with its length in tokens.
 *
 * A cache is immutable: a forward pass over it returns a *new* cache (prefix + new tokens) and
 * leaves this one intact, so one prefix can feed many continuations (every question of a
 * decision reads the same state cache). Whoever holds a cache disposes it exactly once.
 */
export class KvCache {
  #disposed = false;

  constructor(
    readonly tensors: Readonly<Record<string, Tensor>>,
    readonly length: number,
    /** Where the cache's tensors are counted (the model's ledger); caches cut from it share it. */
    readonly ledger?: TensorLedger,
    /** Tensors whose memory `tensors` are views of (kv-rows.ts `keepRows`): disposed with this cache, after them. */
    private readonly held: readonly Tensor[] = [],
  ) {
    ledger?.trackAll(tensors);
  }

  /**
   * Gives up this cache's tensors (and those it holds) without disposing them: the caller owns
   * them now and disposes them. The cache counts as disposed.
   */
  release(): Tensor[] {
    if (this.#disposed) throw new Error('KvCache.release: cache already disposed');
    this.#disposed = true;
    return [...Object.values(this.tensors), ...this.held];
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** Bytes the cache's tensors hold (every past key/value, at its element size). */
  get bytes(): number {
    let n = 0;
    for (const t of Object.values(this.tensors)) n += t.size * (t.type === 'float16' ? 2 : 4);
    return n;
  }

  /**
   * The cache of the first `length` tokens, as a new cache (this one stays intact). Exact, since
   * a position's keys and values depend only on the tokens before it. Only for caches held in
   * CPU memory; returns null for GPU-resident ones (re-reading the prefix is then cheaper).
   */
  truncated(length: number): KvCache | null {
    if (length > this.length || length < 0) throw new Error(`cannot truncate a ${this.length}-token cache to ${length}`);
    const out: Record<string, Tensor> = Object.create(null);
    for (const [name, t] of Object.entries(this.tensors)) {
      if (t.location !== 'cpu') {
        for (const made of Object.values(out)) made.dispose();
        return null;
      }
      // [batch, heads, seq, dim] → keep seq < length. The elements are copied as they are stored
      // (float32 values, or float16 in a Float16Array or as Uint16Array bits), never converted.
      const [b, h, seq, d] = t.dims as [number, number, number, number];
      const src = t.data as ElementArray;
      const dst = emptyLike(src, b * h * length * d);
      for (let row = 0; row < b * h; row++) dst.set(src.subarray(row * seq * d, row * seq * d + length * d) as never, row * length * d);
      out[name] = new Tensor(t.type as 'float32', dst as never, [b, h, length, d]);
    }
    return new KvCache(out, length, this.ledger);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const t of Object.values(this.tensors)) t.dispose();
    for (const t of this.held) t.dispose();
  }
}

/** The shape of one past key/value input, as the model's graph declares it. */
export interface KvInput {
  name: string;
  type: string;
  /** Declared dims; `null` where the graph leaves a dimension symbolic. */
  dims: (number | null)[];
}

/** A zero-length cache (batch 1), for the first forward pass over a prompt. */
export function emptyCache(inputs: readonly KvInput[], ledger?: TensorLedger): KvCache {
  const tensors: Record<string, Tensor> = Object.create(null);
  for (const input of inputs) {
    // Batch is 1; every other symbolic dimension is the (empty) past length.
    const dims = input.dims.map((d, i) => (i === 0 ? 1 : (d ?? 0)));
    tensors[input.name] = new Tensor(input.type as 'float32', emptyData(input.type) as never, dims);
  }
  return new KvCache(tensors, 0, ledger);
}

/** Zero elements of a cache input's type: onnxruntime refuses a float16 tensor over a Float32Array. */
function emptyData(type: string): Float32Array | Uint16Array | ArrayLike<number> {
  switch (type) {
    case 'float32':
      return new Float32Array(0);
    case 'float16':
      return float16Array(0);
    default:
      throw new Error(`past key/value inputs of type ${type} are not supported (float32 or float16)`);
  }
}
