import { afterEach, describe, expect, it, vi } from 'vitest';
import * as f16 from '../../src/engine/runtime/float16.ts';

/**
 * An independent binary16 decoder: moves the sign, exponent and fraction fields into a binary32
 * bit pattern and lets the platform read it (DataView), rather than computing with powers of two
 * as src/engine/runtime/float16.ts does. Subnormals are normalised by shifting the fraction.
 */
function reference(bits: number): number {
  const sign = (bits & 0x8000) << 16;
  let exponent = (bits >>> 10) & 0x1f;
  let fraction = bits & 0x3ff;
  let out: number;
  if (exponent === 0x1f) out = sign | 0x7f800000 | (fraction << 13);
  else if (exponent === 0 && fraction === 0) out = sign;
  else {
    if (exponent === 0) {
      exponent = 1;
      while ((fraction & 0x400) === 0) {
        fraction <<= 1;
        exponent -= 1;
      }
      fraction &= 0x3ff;
    }
    out = sign | ((exponent - 15 + 127) << 23) | (fraction << 13);
  }
  const view = new DataView(new ArrayBuffer(4));
  view.setUint32(0, out >>> 0);
  return view.getFloat32(0);
}

/** Hand-checked values (IEEE 754-2008 binary16). */
const TABLE: [number, number][] = [
  [0x0000, 0],
  [0x8000, -0],
  [0x0001, 2 ** -24], // smallest subnormal, 5.96e-8
  [0x03ff, 1023 * 2 ** -24], // largest subnormal
  [0x0400, 2 ** -14], // smallest normal, 6.10e-5
  [0x3c00, 1],
  [0x3c01, 1 + 2 ** -10],
  [0xbc00, -1],
  [0x4000, 2],
  [0x3555, 0.333251953125],
  [0x7bff, 65504], // largest finite
  [0xfbff, -65504],
  [0x7c00, Infinity],
  [0xfc00, -Infinity],
  [0xc248, -3.140625],
];

describe('float16 decoding', () => {
  it('matches the hand table, including subnormals, infinities and -0', () => {
    for (const [bits, value] of TABLE) {
      expect(Object.is(f16.float16ToNumber(bits), value), `0x${bits.toString(16)}`).toBe(true);
      expect(Object.is(reference(bits), value), `reference 0x${bits.toString(16)}`).toBe(true);
    }
  });

  it('reads every NaN pattern as NaN', () => {
    for (const bits of [0x7c01, 0x7e00, 0x7fff, 0xfc01, 0xfe00, 0xffff]) expect(f16.float16ToNumber(bits)).toBeNaN();
  });

  it('agrees with an independent decoder on all 65,536 bit patterns', () => {
    const all = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const decoded = f16.decodeFloat16Bits(all);
    let mismatches = 0;
    for (let bits = 0; bits < 65536; bits++) {
      const want = reference(bits);
      const got = decoded[bits]!;
      if (!(Object.is(got, want) || (Number.isNaN(got) && Number.isNaN(want)))) mismatches++;
      if (!(Object.is(f16.float16ToNumber(bits), want) || (Number.isNaN(want) && Number.isNaN(f16.float16ToNumber(bits))))) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it('decodes a range from the middle of an array', () => {
    const bits = Uint16Array.from([0x3c00, 0x4000, 0xc248, 0x0001]);
    expect(Array.from(f16.decodeFloat16Bits(bits, 1, 2))).toEqual([2, -3.140625]);
  });
});

describe('float16 encoding', () => {
  it('round-trips every non-NaN bit pattern', () => {
    let mismatches = 0;
    for (let bits = 0; bits < 65536; bits++) {
      const v = reference(bits);
      if (Number.isNaN(v)) continue;
      if (f16.numberToFloat16(v) !== bits) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it('rounds to nearest, ties to even, between every pair of neighbours', () => {
    let mismatches = 0;
    for (let bits = 0; bits < 0x7bff; bits++) {
      const lo = reference(bits);
      const hi = reference(bits + 1);
      const mid = (lo + hi) / 2; // exact in float64
      const even = bits % 2 === 0 ? bits : bits + 1;
      if (f16.numberToFloat16(mid) !== even) mismatches++;
      if (f16.numberToFloat16(lo + (hi - lo) / 4) !== bits) mismatches++;
      if (f16.numberToFloat16(hi - (hi - lo) / 4) !== bits + 1) mismatches++;
      if (f16.numberToFloat16(-mid) !== (even | 0x8000)) mismatches++;
    }
    expect(mismatches).toBe(0);
  });

  it('overflows to infinity past 65520, underflows to signed zero, keeps NaN', () => {
    expect(f16.numberToFloat16(65519.99)).toBe(0x7bff);
    expect(f16.numberToFloat16(65520)).toBe(0x7c00); // the tie with 2^16 rounds to even: infinity
    expect(f16.numberToFloat16(1e9)).toBe(0x7c00);
    expect(f16.numberToFloat16(-1e9)).toBe(0xfc00);
    expect(f16.numberToFloat16(2 ** -26)).toBe(0x0000);
    expect(f16.numberToFloat16(-(2 ** -26))).toBe(0x8000);
    expect(f16.numberToFloat16(-0)).toBe(0x8000);
    expect(f16.numberToFloat16(NaN)).toBe(0x7e00);
  });
});

describe('floatsOf', () => {
  it('reads float16 bits in a Uint16Array as their values, never as integers', () => {
    const data = Uint16Array.from([0x3c00, 0xc248, 0x7c00]);
    expect(Array.from(f16.floatsOf({ type: 'float16', data }))).toEqual([1, -3.140625, Infinity]);
    expect(Array.from(f16.floatsOf({ type: 'float16', data }, 1, 1))).toEqual([-3.140625]);
  });

  it('gives float32 and float64 data as views', () => {
    const data = Float32Array.from([1, 2, 3]);
    const view = f16.floatsOf({ type: 'float32', data }, 1);
    expect(Array.from(view)).toEqual([2, 3]);
    expect((view as Float32Array).buffer).toBe(data.buffer);
    expect(Array.from(f16.floatsOf({ type: 'float64', data: Float64Array.from([0.1]) }))).toEqual([0.1]);
  });

  it('refuses data that does not match its declared type, and non-float types', () => {
    expect(() => f16.floatsOf({ type: 'float16', data: new Float32Array(2) })).toThrow(/float16 tensor holds Float32Array/);
    expect(() => f16.floatsOf({ type: 'float32', data: new Uint16Array(2) })).toThrow(/float32 tensor holds Uint16Array/);
    expect(() => f16.floatsOf({ type: 'int64', data: new BigInt64Array(2) })).toThrow(/int64 is not floating point/);
    expect(() => f16.floatsOf({ type: 'float32', data: new Float32Array(2) }, 1, 2)).toThrow(RangeError);
  });

  it('makes float16 arrays of the type onnxruntime takes (Uint16Array bits without Float16Array)', () => {
    expect(f16.HAS_FLOAT16_ARRAY).toBe(typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'function');
    const a = f16.toFloat16Array([1, -2, 0.1]);
    expect(Array.from(f16.floatsOf({ type: 'float16', data: a }))).toEqual([1, -2, reference(0x2e66)]);
    expect(f16.float16Array(3).length).toBe(3);
  });
});

/**
 * Where the runtime has Float16Array (Chromium), onnxruntime returns float16 data in it. Node 20
 * has none, so a minimal stand-in (elements read through the independent decoder) is installed
 * before the module loads, to exercise that branch.
 */
describe('floatsOf with Float16Array', () => {
  afterEach(() => {
    delete (globalThis as { Float16Array?: unknown }).Float16Array;
    vi.resetModules();
  });

  it('reads a Float16Array element by element, and its bits agree with the Uint16Array path', async () => {
    if (typeof (globalThis as { Float16Array?: unknown }).Float16Array === 'function') {
      // A runtime with the real thing: nothing to stand in for.
      const mod = await import('../../src/engine/runtime/float16.ts');
      const real = new (globalThis as unknown as { Float16Array: new (b: ArrayBuffer) => ArrayLike<number> }).Float16Array(Uint16Array.from([0x3c00, 0xc248]).buffer);
      expect(Array.from(mod.floatsOf({ type: 'float16', data: real }))).toEqual([1, -3.140625]);
      return;
    }
    class StandIn {
      constructor(readonly bits: Uint16Array) {
        return new Proxy(this, {
          get(target, key, receiver) {
            if (typeof key === 'string' && /^\d+$/.test(key)) return reference(target.bits[Number(key)]!);
            if (key === 'length') return target.bits.length;
            if (key === 'subarray') return (a: number, b: number) => new StandIn(target.bits.subarray(a, b));
            return Reflect.get(target, key, receiver);
          },
        });
      }
      static from = () => undefined;
    }
    (globalThis as { Float16Array?: unknown }).Float16Array = StandIn;
    vi.resetModules();
    const mod = await import('../../src/engine/runtime/float16.ts');
    expect(mod.HAS_FLOAT16_ARRAY).toBe(true);
    const bits = Uint16Array.from([0x3c00, 0xc248, 0x0001, 0x7bff]);
    const standIn = new StandIn(bits);
    expect(mod.isFloat16Array(standIn)).toBe(true);
    expect(mod.isFloat16Array(bits)).toBe(false);
    expect(Array.from(mod.floatsOf({ type: 'float16', data: standIn }, 1, 3))).toEqual([-3.140625, 2 ** -24, 65504]);
    expect(Array.from(mod.floatsOf({ type: 'float16', data: standIn }))).toEqual(Array.from(mod.floatsOf({ type: 'float16', data: bits })));
  });
});
