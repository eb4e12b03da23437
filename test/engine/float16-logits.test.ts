import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Tensor } from '@huggingface/transformers';
import { numberToFloat16 } from '../../src/engine/runtime/float16.ts';
import { emptyCache, KvCache } from '../../src/engine/model/kv-cache.ts';
import { LanguageModel } from '../../src/engine/model/language-model.ts';
import { TensorLedger } from '../../src/engine/runtime/tensor-ledger.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** What logitsAt reads of a tensor: its dims, type and data (no onnxruntime involved). */
const fake = (type: string, data: unknown, dims: number[]) => ({ type, data, dims }) as unknown as Tensor;

/** Deterministic logits exactly representable in binary16 (so float32 and float16 hold the same values). */
function logits(rows: number, vocab: number, seed = 7): { values: Float32Array; bits: Uint16Array } {
  const uniform = seededRandom(seed);
  const rand = () => uniform() * 2 - 1;
  const values = new Float32Array(rows * vocab);
  const bits = new Uint16Array(rows * vocab);
  for (let i = 0; i < values.length; i++) {
    bits[i] = numberToFloat16(rand() * 12);
    // Independent of float16.ts' decoder: the value is the float32 nearest the number, re-read below.
    values[i] = decodeByDataView(bits[i]!);
  }
  return { values, bits };
}

function decodeByDataView(bits: number): number {
  const sign = (bits & 0x8000) << 16;
  const e = (bits >>> 10) & 0x1f;
  const f = bits & 0x3ff;
  if (e === 0) return (sign ? -1 : 1) * f * 2 ** -24;
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, (sign | ((e - 15 + 127) << 23) | (f << 13)) >>> 0);
  return view.getFloat32(0);
}

/** The log-softmax written out here, in float64. */
function referenceLogSoftmax(row: ArrayLike<number>): number[] {
  const xs = Array.from(row);
  const max = xs.reduce((a, b) => Math.max(a, b), -Infinity);
  const z = xs.reduce((a, b) => a + Math.exp(b - max), 0);
  return xs.map((x) => x - max - Math.log(z));
}

describe('logits in float16 (Uint16Array bits, as onnxruntime-node returns them)', () => {
  const vocab = 257;
  const rows = 3;
  const { values, bits } = logits(rows, vocab);
  const f32 = fake('float32', values, [1, rows, vocab]);
  const f16 = fake('float16', bits, [1, rows, vocab]);

  it('logProbsAt equals the float32 computation and an independent softmax, at every row', () => {
    for (const pos of [0, 1, 2, -1]) {
      const a = LanguageModel.logProbsAt(f16, pos);
      const b = LanguageModel.logProbsAt(f32, pos);
      expect(Array.from(a)).toEqual(Array.from(b));
      const r = ((pos % rows) + rows) % rows;
      const ref = referenceLogSoftmax(values.subarray(r * vocab, (r + 1) * vocab));
      for (let i = 0; i < vocab; i++) expect(a[i]).toBeCloseTo(ref[i]!, 12);
    }
  });

  it('argmaxAt equals the float32 argmax (and is not the argmax of the raw bit patterns)', () => {
    for (const pos of [0, 1, 2]) {
      const want = LanguageModel.argmaxAt(f32, pos);
      expect(LanguageModel.argmaxAt(f16, pos)).toBe(want);
      const rowValues = values.subarray(pos * vocab, (pos + 1) * vocab);
      expect(rowValues[want]).toBe(Math.max(...rowValues));
    }
    // Negative logits have the sign bit set: as integers they are the largest, so reading bits
    // as numbers would pick a negative logit. Make sure this data would have caught that.
    const rowBits = bits.subarray(0, vocab);
    const bitsArgmax = rowBits.indexOf(Math.max(...rowBits));
    expect(values[bitsArgmax]!).toBeLessThan(0);
    expect(bitsArgmax).not.toBe(LanguageModel.argmaxAt(f32, 0));
  });

  it('refuses float16 logits held in a Float32Array rather than misreading them', () => {
    expect(() => LanguageModel.logProbsAt(fake('float16', values, [1, rows, vocab]), 0)).toThrow(/float16 tensor holds Float32Array/);
  });
});

describe('logits in a Float16Array (as onnxruntime-web returns them in Chromium)', () => {
  afterEach(() => {
    if (!nativeFloat16) delete (globalThis as { Float16Array?: unknown }).Float16Array;
    vi.resetModules();
  });
  const nativeFloat16 = typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'function';

  it('logProbsAt and argmaxAt equal the float32 computation', async () => {
    const vocab = 64;
    const rows = 2;
    const { values, bits } = logits(rows, vocab, 11);
    let data: unknown;
    if (nativeFloat16) {
      data = new (globalThis as unknown as { Float16Array: new (b: ArrayBuffer) => unknown }).Float16Array(bits.buffer as ArrayBuffer);
    } else {
      // Node 20 has no Float16Array: a stand-in whose elements read as values, installed before the engine loads.
      class StandIn {
        constructor(readonly b: Uint16Array) {
          return new Proxy(this, {
            get(target, key, receiver) {
              if (typeof key === 'string' && /^\d+$/.test(key)) return decodeByDataView(target.b[Number(key)]!);
              if (key === 'length') return target.b.length;
              if (key === 'subarray') return (s: number, e: number) => new StandIn(target.b.subarray(s, e));
              return Reflect.get(target, key, receiver);
            },
          });
        }
        static from = () => undefined;
      }
      (globalThis as { Float16Array?: unknown }).Float16Array = StandIn;
      data = new StandIn(bits);
    }
    vi.resetModules();
    const { LanguageModel: LM } = await import('../../src/engine/model/language-model.ts');
    const t16 = fake('float16', data, [1, rows, vocab]);
    const t32 = fake('float32', values, [1, rows, vocab]);
    for (const pos of [0, 1]) {
      expect(Array.from(LM.logProbsAt(t16, pos))).toEqual(Array.from(LM.logProbsAt(t32, pos)));
      expect(LM.argmaxAt(t16, pos)).toBe(LM.argmaxAt(t32, pos));
    }
  });
});

describe('float16 KV caches', () => {
  it('an empty float16 cache is a float16 tensor (not float32 data under a float16 name)', () => {
    const ledger = new TensorLedger();
    const cache = emptyCache([{ name: 'past_key_values.0.key', type: 'float16', dims: [null, 2, null, 16] }], ledger);
    const t = cache.tensors['past_key_values.0.key']!;
    expect(t.type).toBe('float16');
    expect(t.dims).toEqual([1, 2, 0, 16]);
    expect(t.data).not.toBeInstanceOf(Float32Array);
    expect((t.data as ArrayLike<number>).length).toBe(0);
    cache.dispose();
    expect(ledger.live).toBe(0);
  });

  it('refuses cache inputs of a type it cannot make', () => {
    expect(() => emptyCache([{ name: 'past_key_values.0.key', type: 'int8', dims: [null, 2, null, 16] }])).toThrow(/int8/);
  });

  it('truncates a float16 cache bit for bit, keeping its type', async () => {
    const { Tensor } = await import('@huggingface/transformers');
    const [b, h, seq, d] = [1, 2, 5, 3];
    const bits = Uint16Array.from({ length: b * h * seq * d }, (_, i) => numberToFloat16(i / 7 - 2));
    const ledger = new TensorLedger();
    const cache = new KvCache({ 'past_key_values.0.key': new Tensor('float16', bits, [b, h, seq, d]) }, seq, ledger);
    const cut = cache.truncated(2)!;
    const t = cut.tensors['past_key_values.0.key']!;
    expect(t.type).toBe('float16');
    expect(t.dims).toEqual([b, h, 2, d]);
    const got = Array.from(t.data as Uint16Array);
    const want: number[] = [];
    for (let head = 0; head < h; head++) for (let s = 0; s < 2; s++) for (let k = 0; k < d; k++) want.push(bits[(head * seq + s) * d + k]!);
    expect(got).toEqual(want);
    cut.dispose();
    cache.dispose();
    expect(ledger.live).toBe(0);
  });
});
