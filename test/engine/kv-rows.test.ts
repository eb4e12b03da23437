/**
 * keepRows (model/kv-rows.ts): the rows an extraction keeps, moved down in their own memory, hold
 * exactly what an independent copy of them holds (selectRows), for every pattern of dropped rows;
 * memory that onnxruntime-web owns (a view of shared wasm memory) is copied, never written; every
 * tensor is released. stackRows with room, and writeStep into it, against element-by-element
 * expectations: each row's tokens end at `used`, the room is zeros and masked, a step lands in the
 * first free position.
 */
import { Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { KvCache } from '../../src/engine/model/kv-cache.ts';
import { keepRows, stackRows, writeStep, type CacheRows } from '../../src/engine/model/kv-rows.ts';
import { selectRows } from '../support/select-rows.ts';
import { TensorLedger } from '../../src/engine/runtime/tensor-ledger.ts';

const [B, H, S, D] = [5, 2, 3, 4];

function rowsOf(ledger: TensorLedger, shared = false): CacheRows {
  const tensors: Record<string, Tensor> = {};
  for (const [k, name] of ['past_key_values.0.key', 'past_key_values.0.value'].entries()) {
    const n = B * H * S * D;
    const data = shared ? new Float32Array(new SharedArrayBuffer(n * 4)) : new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = k * 1000 + i + 0.5; // every element distinct
    tensors[name] = new Tensor('float32', data, [B, H, S, D]);
  }
  return {
    cache: new KvCache(tensors, S, ledger),
    mask: Array.from({ length: B }, (_, r) => Uint8Array.from({ length: S }, (_, j) => (j >= r % S ? 1 : 0))),
    positions: Array.from({ length: B }, (_, r) => 10 + r),
    used: S,
  };
}

describe('keepRows', () => {
  for (const keep of [[1, 2, 3, 4], [0, 2, 4], [4], [0, 1, 2, 3, 4], [0], [0, 1], [2, 3]]) {
    it(`keeps rows ${keep.join(', ')} in place, as a copy of them holds them`, () => {
      const ledger = new TensorLedger();
      const source = rowsOf(ledger);
      const want = selectRows(source, keep);
      source.cache.dispose();
      const rows = rowsOf(ledger);
      const buffers = Object.values(rows.cache.tensors).map((t) => (t.data as Float32Array).buffer);
      const got = keepRows(rows, keep);
      expect(rows.cache.disposed).toBe(true);
      for (const [name, t] of Object.entries(got.cache.tensors)) {
        const w = want.cache.tensors[name]!;
        expect(t.dims, name).toEqual([keep.length, H, S, D]);
        expect([...(t.data as Float32Array)], name).toEqual([...(w.data as Float32Array)]);
      }
      expect(Object.values(got.cache.tensors).map((t) => (t.data as Float32Array).buffer)).toEqual(buffers);
      expect(got.mask).toEqual(want.mask);
      expect(got.positions).toEqual(want.positions);
      expect(got.cache.length).toBe(S);
      got.cache.dispose();
      want.cache.dispose();
      expect(ledger.live).toBe(0);
    });
  }

  it('keeps rows in shared (wasm) memory in that memory, and releases the tensors that own it only with the new cache', () => {
    const ledger = new TensorLedger();
    const source = rowsOf(ledger, true);
    const want = selectRows(source, [1, 3]);
    source.cache.dispose();
    const rows = rowsOf(ledger, true);
    const owners = Object.values(rows.cache.tensors);
    const released: Tensor[] = [];
    for (const t of owners) {
      const own = t.dispose.bind(t);
      t.dispose = () => {
        released.push(t);
        own();
      };
    }
    const got = keepRows(rows, [1, 3]);
    for (const [name, t] of Object.entries(got.cache.tensors)) {
      expect((t.data as Float32Array).buffer, name).toBeInstanceOf(SharedArrayBuffer);
      expect((t.data as Float32Array).buffer, name).toBe((rows.cache.tensors[name]!.data as Float32Array).buffer);
      expect((t.data as Float32Array).byteOffset, name).toBe((rows.cache.tensors[name]!.data as Float32Array).byteOffset);
      expect([...(t.data as Float32Array)], name).toEqual([...(want.cache.tensors[name]!.data as Float32Array)]);
    }
    expect(released.length).toBe(0);
    expect(() => rows.cache.release()).toThrow(/already disposed/);
    got.cache.dispose();
    expect(released.length).toBe(owners.length);
    expect(owners.every((t) => released.includes(t))).toBe(true);
    want.cache.dispose();
    expect(ledger.live).toBe(0);
  });

  it('refuses rows that are not ascending', () => {
    const ledger = new TensorLedger();
    const rows = rowsOf(ledger);
    expect(() => keepRows(rows, [2, 1])).toThrow(/not ascending/);
    expect(() => keepRows(rows, [1, 1])).toThrow(/not ascending/);
    rows.cache.dispose();
  });
});

/** A batch-1 cache of `seq` positions whose element (head, position, i) is `tag * 1000 + head * 100 + position * 10 + i`. */
function cacheOf(ledger: TensorLedger, tag: number, seq: number, h = 2, d = 3): KvCache {
  const data = new Float32Array(h * seq * d);
  for (let head = 0; head < h; head++) for (let p = 0; p < seq; p++) for (let i = 0; i < d; i++) data[(head * seq + p) * d + i] = tag * 1000 + head * 100 + p * 10 + i;
  return new KvCache({ 'past_key_values.0.key': new Tensor('float32', data, [1, h, seq, d]) }, seq, ledger);
}

describe('stackRows with room, and writeStep', () => {
  it('aligns every row at `used`, leaves the room zero and masked, and stacks rows that have room onto a bigger batch', () => {
    const ledger = new TensorLedger();
    const [a, b, c] = [cacheOf(ledger, 1, 2), cacheOf(ledger, 2, 4), cacheOf(ledger, 3, 5)];
    const rows = stackRows([a, b], null, 3)!;
    expect([rows.used, rows.cache.length, rows.positions]).toEqual([4, 7, [2, 4]]);
    expect(rows.mask.map((m) => [...m])).toEqual([
      [0, 0, 1, 1, 0, 0, 0],
      [1, 1, 1, 1, 0, 0, 0],
    ]);
    const at = (r: CacheRows, row: number, head: number, p: number, i: number) => {
      const t = r.cache.tensors['past_key_values.0.key']!;
      const [, h, len, d] = t.dims as number[];
      return (t.data as Float32Array)[((row * h! + head) * len! + p) * d! + i];
    };
    expect(at(rows, 0, 1, 2, 2)).toBe(1000 + 100 + 0 + 2); // row 0's first token, at position 2
    expect(at(rows, 1, 1, 3, 1)).toBe(2000 + 100 + 30 + 1);
    for (let p = 4; p < 7; p++) expect(at(rows, 1, 0, p, 0)).toBe(0);

    // A step: [2 rows, 2 heads, 1, 3], element (row, head, i) = 9000 + row * 100 + head * 10 + i.
    const step = new Tensor('float32', Float32Array.from({ length: 12 }, (_, k) => 9000 + Math.floor(k / 6) * 100 + (Math.floor(k / 3) % 2) * 10 + (k % 3)), [2, 2, 1, 3]);
    writeStep(rows, 'past_key_values.0.key', step);
    expect(at(rows, 1, 1, 4, 2)).toBe(9000 + 100 + 10 + 2);
    expect(at(rows, 0, 0, 4, 0)).toBe(9000);
    expect(at(rows, 0, 0, 5, 0)).toBe(0);
    rows.used = 5;
    for (const m of rows.mask) m[4] = 1;

    // c (5 positions) joins: the batch's used positions grow to 5, the rows already there keep theirs, shifted by nothing; room 3 again.
    const joined = stackRows([c], rows, 3)!;
    expect([joined.used, joined.cache.length, joined.positions]).toEqual([5, 8, [2, 4, 5]]);
    expect(joined.mask.map((m) => [...m])).toEqual([
      [0, 0, 1, 1, 1, 0, 0, 0],
      [1, 1, 1, 1, 1, 0, 0, 0],
      [1, 1, 1, 1, 1, 0, 0, 0],
    ]);
    expect(at(joined, 1, 1, 4, 2)).toBe(9000 + 100 + 10 + 2);
    expect(at(joined, 2, 1, 4, 1)).toBe(3000 + 100 + 40 + 1);
    expect(at(joined, 0, 0, 5, 0)).toBe(0);

    // Without room: the batch as long as its longest row, as before.
    const bare = stackRows([a, c])!;
    expect([bare.used, bare.cache.length]).toEqual([5, 5]);

    const full = stackRows([c])!;
    expect(() => writeStep(full, 'past_key_values.0.key', new Tensor('float32', new Float32Array(6), [1, 2, 1, 3]))).toThrow(/no room left/);
    expect(() => writeStep(joined, 'past_key_values.0.key', step)).toThrow(/step is 2×2×1×3, the rows 3×2×8×3/);
    for (const x of [a, b, c, rows.cache, joined.cache, bare.cache, full.cache]) x.dispose();
    step.dispose();
    expect(ledger.live).toBe(0);
  });
});
