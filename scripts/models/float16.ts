/**
 * IEEE-754 binary16 (float16) conversion for the generator: round-to-nearest-even from float64 /
 * float32, exact decoding, and little-endian bytes for ONNX FLOAT16 initializers.
 *
 * Node 20 has neither Float16Array nor Math.f16round, so this is done with integer arithmetic on
 * the float32 bit pattern (a double rounded first to float32 and then to float16 can differ from a
 * direct rounding only on exact float32 ties, which the generator's values never hit).
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary16 bit pattern nearest to `x` (ties to even; overflow → ±Infinity; NaN → quiet NaN). */
export function float16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  // unbiased exponent e = exp - 127; half exponent field = e + 15
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // subnormal half (or zero): value = mant_full · 2^(exp-150); half subnormal unit = 2^-24
    if (e < -10) return sign; // below half of the smallest subnormal
    mant |= 0x800000;
    const shift = 14 - e; // 14 - e in [14, 24]
    const half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    const rounded = rem > mid || (rem === mid && (half & 1) === 1) ? half + 1 : half;
    return sign | rounded; // a carry into the exponent field yields the smallest normal, correctly
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1) === 1)) half += 1; // may carry into exp / to Inf
  return sign | half;
}

/** The number a binary16 bit pattern encodes. */
export function float16Value(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** `x` rounded to the nearest float16 value (as a number). */
export function f16round(x: number): number {
  return float16Value(float16Bits(x));
}

/** Bit patterns of `a`'s values rounded to float16. */
export function toFloat16Bits(a: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = float16Bits(a[i] as number);
  return out;
}

/** float32 copy of `a`'s values rounded to float16 (what an fp16 tensor holds, widened). */
export function roundToFloat16(a: ArrayLike<number>): Float32Array {
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = f16round(a[i] as number);
  return out;
}

/** Decodes binary16 bit patterns to float32. */
export function fromFloat16Bits(bits: ArrayLike<number>): Float32Array {
  const out = new Float32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = float16Value(bits[i] as number);
  return out;
}

/** The largest finite float16 value. */
export const FLOAT16_MAX = 65504;
