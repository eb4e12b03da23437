/**
 * e^x for x ≤ 0, about twice as fast as `Math.exp` in V8 and within a few units in the last place
 * of it (relative error below 1e-15; test/engine/exp-non-positive.test.ts compares the two over the
 * whole range). The log-softmax of a row (log-softmax.ts), chat's sampler and `maskLogProbs` each
 * take one exponential per token of the vocabulary (262,144 for Gemma 3), and `Math.exp` was most
 * of their time (docs/benchmarks.md, `sampler`).
 *
 * e^x = 2^(k/256) · e^r, with k = floor(x · 256 / ln 2) and r = x − k · ln 2 / 256 in [0, ln 2 / 256):
 * - 2^(k/256) is a table entry for k's remainder mod 256 times a power of two for its quotient;
 * - r is taken in two parts (fdlibm's ln 2 split, whose high part times any k here is exact), so
 *   it keeps its precision however large |x| is;
 * - e^r is a degree-5 Taylor polynomial, whose truncation error (r^6 / 720 < 2e-19) is below
 *   float64's rounding.
 *
 * Only for x ≤ 0, which is all the sampler asks for (each value less the largest); anything above
 * goes to `Math.exp`. Below −745.2, e^x rounds to 0 in float64, and so does this.
 */
const LOG2E_256 = Math.LOG2E * 256;
/** ln 2 / 256 in two parts (fdlibm's ln2HI and ln2LO, over 256): HI has 32 significant bits. */
const LN2_256_HI = 6.9314718036912381649e-1 / 256;
const LN2_256_LO = 1.90821492927058770002e-10 / 256;
/** 2^(j/256) for j = 0 … 255. */
const FRACTION = Float64Array.from({ length: 256 }, (_, j) => Math.pow(2, j / 256));
/** 2^−e for e = 0 … 1074 (the last ones subnormal). */
const NEGATIVE_POWER = Float64Array.from({ length: 1075 }, (_, e) => Math.pow(2, -e));

export function expNonPositive(x: number): number {
  if (x > 0) return Math.exp(x);
  if (x < -745.2) return 0; // also -Infinity; NaN falls through and stays NaN
  // k ≥ −275,223 here (x ≥ −745.2): k · HI is exact, k >> 8 is floor(k / 256) and k & 255 its remainder.
  const k = Math.floor(x * LOG2E_256);
  const r = x - k * LN2_256_HI - k * LN2_256_LO;
  const p = 1 + r * (1 + r * (0.5 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120)))));
  const e = -(k >> 8);
  return e > 1074 ? 0 : FRACTION[k & 255]! * p * NEGATIVE_POWER[e]!;
}
