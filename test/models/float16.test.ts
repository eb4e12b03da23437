/**
 * The generator's float16 conversion (scripts/models/float16.ts) against an independent
 * computation: the exact value of every one of the 65,536 bit patterns from its fields, and
 * round-to-nearest-even checked by brute force against the two neighbouring float16 values.
 */
import { describe, expect, it } from 'vitest';
import { FLOAT16_MAX, f16round, float16Bits, float16Value } from '../../scripts/models/float16.ts';

describe('float16', () => {
  it('decodes and re-encodes every finite bit pattern exactly', () => {
    let finite = 0;
    for (let h = 0; h < 0x10000; h++) {
      const exp = (h >> 10) & 31;
      if (exp === 31) continue;
      const mant = h & 1023;
      const want = (h & 0x8000 ? -1 : 1) * (exp === 0 ? mant / 1024 * 2 ** -14 : (1 + mant / 1024) * 2 ** (exp - 15));
      expect(float16Value(h)).toBe(want);
      if (h !== 0x8000) expect(float16Bits(want)).toBe(h);
      finite++;
    }
    expect(finite).toBe(63488);
  });

  it('rounds to the nearest float16, ties to even, overflowing to Infinity', () => {
    // every positive finite float16 value, in order
    const values = Array.from({ length: 0x7c00 }, (_, h) => float16Value(h));
    let seed = 7;
    const rnd = () => ((seed = (seed * 48271) % 2147483647) / 2147483647);
    for (let i = 0; i < 20000; i++) {
      const x = Math.fround(2 ** (rnd() * 40 - 26) * (0.5 + rnd()));
      const r = f16round(x);
      if (x > FLOAT16_MAX + 16) {
        expect(r).toBe(Infinity);
        continue;
      }
      // binary search for the neighbours lo <= x <= hi
      let a = 0;
      let b = values.length - 1;
      while (b - a > 1) {
        const m = (a + b) >> 1;
        if ((values[m] as number) <= x) a = m;
        else b = m;
      }
      const lo = values[a] as number;
      const hi = values[b] as number;
      const want = x - lo < hi - x ? lo : x - lo > hi - x ? hi : a % 2 === 0 ? lo : hi;
      expect(r, `${x}`).toBe(x >= hi ? hi : want);
      expect(f16round(-x)).toBe(-r);
    }
    expect(f16round(1 + 2 ** -11)).toBe(1); // tie → even mantissa
    expect(f16round(1 + 3 * 2 ** -11)).toBe(1 + 2 ** -9);
    expect(f16round(65520)).toBe(Infinity);
    expect(f16round(65519)).toBe(65504);
  });
});
