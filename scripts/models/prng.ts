/**
 * Seeded, platform-independent pseudo-random numbers for the test-model generator.
 *
 * Everything here uses only 32-bit integer arithmetic (Math.imul, shifts) and IEEE-754
 * operations that are correctly rounded in every JavaScript engine (+, -, *, /, sqrt), so the
 * same seed yields bit-identical numbers on every machine. No Math.log / Math.cos: their last
 * bit is implementation-defined, which is why the "Gaussian" below is an Irwin–Hall sum of four
 * uniforms instead of Box–Muller.
 */

/** 32-bit FNV-1a hash of a string's UTF-16 code units; used to derive per-tensor seeds. */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** One step of splitmix32 (used only to expand a seed into xoshiro state). */
function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/**
 * xoshiro128** generator (Blackman & Vigna). 2^128 - 1 period, passes BigCrush for our needs.
 * Methods are written so V8 can keep the state in registers in hot loops.
 */
export class Xoshiro128 {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    const st = { s: seed | 0 };
    this.a = splitmix32(st);
    this.b = splitmix32(st);
    this.c = splitmix32(st);
    this.d = splitmix32(st);
    if ((this.a | this.b | this.c | this.d) === 0) this.d = 1;
  }

  /** Uniform unsigned 32-bit integer. */
  nextU32(): number {
    const b = this.b;
    const t = b << 9;
    let r = Math.imul(b, 5);
    r = Math.imul((r << 7) | (r >>> 25), 9);
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = (this.d << 11) | (this.d >>> 21);
    return r >>> 0;
  }

  /** Uniform double in [0, 1) with 32 bits of randomness. */
  nextFloat(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n). Slight modulo bias is irrelevant here; determinism is what matters. */
  nextInt(n: number): number {
    return Math.floor(this.nextFloat() * n);
  }

  /**
   * Approximately standard-normal sample: the sum of four independent uniform 16-bit integers,
   * centred and scaled to unit variance (Irwin–Hall, n = 4; range ±3.46, excess kurtosis -0.3).
   */
  nextNormal(): number {
    const x = this.nextU32();
    const y = this.nextU32();
    const s = (x & 0xffff) + (x >>> 16) + (y & 0xffff) + (y >>> 16);
    return (s - IH_MEAN) * IH_INV_STD;
  }

  /**
   * Fills `out` with `mean + std * nextNormal()` (rounded to float32 on store). The generator
   * loop is inlined here because this runs ~135M times for the SmolLM2-shaped model.
   */
  fillNormal(out: Float32Array, std: number, mean = 0): void {
    let a = this.a;
    let b = this.b;
    let c = this.c;
    let d = this.d;
    const k = std * IH_INV_STD;
    const n = out.length;
    for (let i = 0; i < n; i++) {
      // draw 1
      let t = b << 9;
      let r = Math.imul(b, 5);
      r = Math.imul((r << 7) | (r >>> 25), 9);
      c ^= a;
      d ^= b;
      b ^= c;
      a ^= d;
      c ^= t;
      d = (d << 11) | (d >>> 21);
      const x = r >>> 0;
      // draw 2
      t = b << 9;
      r = Math.imul(b, 5);
      r = Math.imul((r << 7) | (r >>> 25), 9);
      c ^= a;
      d ^= b;
      b ^= c;
      a ^= d;
      c ^= t;
      d = (d << 11) | (d >>> 21);
      const y = r >>> 0;
      const s = (x & 0xffff) + (x >>> 16) + (y & 0xffff) + (y >>> 16);
      out[i] = mean + (s - IH_MEAN) * k;
    }
    this.a = a;
    this.b = b;
    this.c = c;
    this.d = d;
  }
}

/** Mean and 1/std of the sum of four uniform integers in [0, 65535]. */
const IH_MEAN = 4 * 32767.5;
const IH_INV_STD = 1 / Math.sqrt((4 * (65536 * 65536 - 1)) / 12);

/** A generator whose stream depends only on (seed, label): tensors can be regenerated individually. */
export function rngFor(seed: number, label: string): Xoshiro128 {
  return new Xoshiro128((Math.imul(seed | 0, 0x9e3779b1) ^ fnv1a32(label)) | 0);
}
