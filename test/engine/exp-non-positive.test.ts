/**
 * The exponential of the log-softmax and of chat's sampler (src/engine/model/exp-non-positive.ts)
 * against V8's `Math.exp`, an independent implementation (fdlibm's): a relative error below 1e-15
 * over the whole range where e^x is a normal float64, and the same zeros and special values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expNonPositive } from '../../src/engine/model/exp-non-positive.ts';

const relative = (x: number) => Math.abs(expNonPositive(x) - Math.exp(x)) / Math.exp(x);

describe('expNonPositive', () => {
  it('is within 1e-15 of Math.exp, relative, wherever e^x is a normal float64 (x in [-708, 0])', () => {
    fc.assert(
      fc.property(fc.double({ min: -708, max: 0, noNaN: true }), (x) => relative(x) < 1e-15),
      { numRuns: 200_000, seed: 20261129 },
    );
    // A dense sweep too: every 1/1024 of the range near 0, where the tokens that matter lie.
    let worst = 0;
    for (let i = 0; i <= 64 * 1024; i++) worst = Math.max(worst, relative(-i / 1024));
    expect(worst).toBeLessThan(1e-15);
  });

  it('is 1 at 0, within 1e-12 of 2^-n at n · ln 2, and 0 where e^x rounds to 0', () => {
    expect(expNonPositive(0)).toBe(1);
    expect(expNonPositive(-0)).toBe(1);
    for (let n = 1; n <= 1000; n++) expect(expNonPositive(-n * Math.LN2) / Math.pow(2, -n)).toBeCloseTo(1, 12);
    expect(expNonPositive(-745.2)).toBe(0);
    expect(expNonPositive(-1e30)).toBe(0);
    expect(expNonPositive(-Infinity)).toBe(0);
    expect(Number.isNaN(expNonPositive(Number.NaN))).toBe(true);
  });

  it('in the subnormal range stays within a few units of the smallest float64 of Math.exp', () => {
    for (let x = -745.1; x < -708; x += 0.37) expect(Math.abs(expNonPositive(x) - Math.exp(x))).toBeLessThanOrEqual(2 * Number.MIN_VALUE + 1e-15 * Math.exp(x));
  });

  it('hands anything positive to Math.exp', () => {
    for (const x of [1e-300, 0.5, 1, 10, 709]) expect(expNonPositive(x)).toBe(Math.exp(x));
  });
});
