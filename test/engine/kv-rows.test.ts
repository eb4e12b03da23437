/**
 * keepRows (model/kv-rows.ts): the rows an extraction keeps, moved down in their own memory, hold
 * exactly what an independent copy of them holds (selectRows), for every pattern of dropped rows;
 * memory that onnxruntime-web owns (a view of shared wasm memory) is copied, never written; every
 * tensor is released.
 */
import { Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { KvCache } from '../../src/engine/model/kv-cache.ts';
import { keepRows, type CacheRows } from '../../src/engine/model/kv-rows.ts';
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
