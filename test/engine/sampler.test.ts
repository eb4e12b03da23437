import { describe, expect, it } from 'vitest';
import { argmax, maskedArgmax, sampleToken, type SamplingParams } from '../../src/engine/chat/sampler.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** The independent computation: softmax at the temperature, sort the whole vocabulary, cut, draw. */
function referenceSample(logProbs: Float64Array, params: SamplingParams, random: () => number): number {
  const scaled = Array.from(logProbs, (lp, token) => ({ token, lp: lp / params.temperature }));
  const max = Math.max(...scaled.map((s) => s.lp));
  let total = 0;
  const weighted = scaled.map((s) => {
    const p = Math.exp(s.lp - max);
    total += p;
    return { token: s.token, p };
  });
  weighted.sort((a, b) => b.p - a.p || a.token - b.token);
  let kept = weighted.length;
  let mass = 0;
  for (let i = 0; i < weighted.length; i++) {
    mass += weighted[i]!.p / total;
    if (mass >= params.topP) {
      kept = i + 1;
      break;
    }
  }
  const nucleus = weighted.slice(0, kept);
  let r = random() * nucleus.reduce((s, w) => s + w.p, 0);
  for (const w of nucleus) {
    r -= w.p;
    if (r <= 0) return w.token;
  }
  return nucleus[nucleus.length - 1]!.token;
}

/** Log-probabilities of a random distribution: `spread` sets how peaked it is; some tokens masked. */
function distribution(n: number, spread: number, random: () => number, masked = 0): Float64Array {
  const logits = Array.from({ length: n }, () => (random() - 0.5) * spread);
  for (let i = 0; i < masked; i++) logits[Math.floor(random() * n)] = -Infinity;
  const max = Math.max(...logits);
  const z = Math.log(logits.reduce((s, x) => s + Math.exp(x - max), 0)) + max;
  return Float64Array.from(logits, (x) => x - z);
}

describe('sampleToken', () => {
  it('is the argmax at temperature 0', () => {
    const random = seededRandom(3);
    for (let k = 0; k < 20; k++) {
      const lp = distribution(500, 10, random);
      expect(sampleToken(lp, { temperature: 0, topP: 0.5 }, random)).toBe(argmax(lp));
    }
  });

  it('with top_p < 1 draws exactly the token that sorting the whole vocabulary draws', () => {
    const gen = seededRandom(11);
    let compared = 0;
    for (const n of [7, 300, 5000]) {
      for (const spread of [0.5, 8, 40, 200]) {
        for (const temperature of [0.2, 0.7, 1, 1.8]) {
          for (const topP of [0.05, 0.5, 0.9, 0.99, 0.999999]) {
            const lp = distribution(n, spread, gen, n > 10 ? 5 : 1);
            const seed = Math.floor(gen() * 2 ** 31);
            const a = seededRandom(seed);
            const b = seededRandom(seed);
            for (let d = 0; d < 3; d++) {
              expect(sampleToken(lp, { temperature, topP }, a)).toBe(referenceSample(lp, { temperature, topP }, b));
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBe(3 * 4 * 4 * 5 * 3);
  });

  it('with top_p = 1 draws the first token whose cumulative probability reaches the draw', () => {
    const gen = seededRandom(5);
    for (let k = 0; k < 50; k++) {
      const temperature = 0.3 + gen() * 1.5;
      const lp = distribution(64, 12, gen, 3);
      const p = Array.from(lp, (x) => Math.exp(x / temperature));
      const total = p.reduce((s, x) => s + x, 0);
      const u = gen();
      let expected = -1;
      let cumulative = 0;
      for (let i = 0; i < p.length && expected < 0; i++) {
        cumulative += p[i]! / total;
        if (p[i]! > 0 && cumulative >= u) expected = i;
      }
      // a draw within rounding of a boundary could go either way: skip those (none expected)
      const margin = Math.min(...p.map((_, i) => Math.abs(p.slice(0, i + 1).reduce((s, x) => s + x, 0) / total - u)));
      if (margin < 1e-9) continue;
      expect(sampleToken(lp, { temperature, topP: 1 }, () => u)).toBe(expected);
    }
  });

  it('draws tokens with their softmax probabilities, and never a masked one', () => {
    const lp = Float64Array.from([Math.log(0.5), Math.log(0.3), -Infinity, Math.log(0.15), Math.log(0.05)]);
    for (const topP of [1, 0.999]) {
      const random = seededRandom(42);
      const counts = [0, 0, 0, 0, 0];
      const draws = 40_000;
      for (let i = 0; i < draws; i++) counts[sampleToken(lp, { temperature: 1, topP }, random)]!++;
      expect(counts[2]).toBe(0);
      [0.5, 0.3, 0, 0.15, 0.05].forEach((p, i) => expect(Math.abs(counts[i]! / draws - p)).toBeLessThan(0.01));
    }
    // top_p 0.7: the nucleus is {0, 1} (0.5 + 0.3 ≥ 0.7), renormalised to 5/8 and 3/8
    const random = seededRandom(7);
    const counts = [0, 0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[sampleToken(lp, { temperature: 1, topP: 0.7 }, random)]!++;
    expect(counts[2]! + counts[3]! + counts[4]!).toBe(0);
    expect(Math.abs(counts[0]! / 40_000 - 5 / 8)).toBeLessThan(0.01);
  });

  it('repeats its draws for the same seed', () => {
    const lp = distribution(2000, 6, seededRandom(9));
    const run = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 30 }, () => sampleToken(lp, { temperature: 0.9, topP: 0.95 }, random));
    };
    expect(run(123)).toEqual(run(123));
    expect(run(123)).not.toEqual(run(124));
  });

  it("under a grammar's bitmask draws exactly what the same values with -Infinity outside it draw, raw logits or log-probabilities alike", () => {
    const gen = seededRandom(17);
    let compared = 0;
    // 37 and 1000 tokens: a last word of the mask only partly used.
    for (const n of [37, 1000, 4099]) {
      for (const sparse of [false, true]) {
        for (const temperature of [0, 0.6, 1, 1.7]) {
          for (const topP of [1, 0.9, 0.3]) {
            // Words allowing everything, nothing, or a few tokens; or (sparse) a few tokens in one word
            // of 8, as between JSON values; at least one token allowed.
            const mask = new Int32Array(Math.ceil(n / 32));
            for (let w = 0; w < mask.length; w++) {
              if (sparse) mask[w] = w % 8 === 0 ? 1 << Math.floor(gen() * 32) : 0;
              else mask[w] = gen() < 0.3 ? -1 : gen() < 0.5 ? 0 : Math.floor(gen() * 2 ** 32) | 0;
            }
            mask[0] = mask[0]! | 1;
            // float32, as onnxruntime hands a row over; the reference reads the same values in float64.
            const raw = Float32Array.from({ length: n }, () => (gen() - 0.5) * 10 + 3);
            const ruledOut = Float64Array.from(raw, (v, i) => (((mask[i >> 5]! >>> (i & 31)) & 1) === 1 ? v : -Infinity));
            const seed = Math.floor(gen() * 2 ** 31);
            const a = seededRandom(seed);
            const b = seededRandom(seed);
            const c = seededRandom(seed);
            for (let d = 0; d < 3; d++) {
              const drawn = sampleToken(raw, { temperature, topP }, a, mask);
              expect(drawn).toBe(sampleToken(ruledOut, { temperature, topP }, b));
              // The independent computation where it walks the same order (top_p = 1 walks token order, above).
              if (temperature === 0) expect(drawn).toBe(argmax(ruledOut));
              else if (topP < 1) expect(drawn).toBe(referenceSample(ruledOut, { temperature, topP }, c));
              expect(ruledOut[drawn]).not.toBe(-Infinity);
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBe(3 * 2 * 4 * 3 * 3);
  });

  it('maskedArgmax: the first allowed token of the largest value, words allowing nothing skipped, as the argmax with -Infinity outside the mask', () => {
    const gen = seededRandom(23);
    for (let k = 0; k < 200; k++) {
      const n = 1 + Math.floor(gen() * 300);
      // Few distinct values: ties are common, and the first allowed one must win.
      const row = Float32Array.from({ length: n }, () => Math.floor(gen() * 4));
      const mask = new Int32Array(Math.ceil(n / 32));
      for (let w = 0; w < mask.length; w++) mask[w] = gen() < 0.4 ? 0 : gen() < 0.5 ? -1 : Math.floor(gen() * 2 ** 32) | 0;
      let expected = -1;
      for (let i = 0; i < n; i++) if (((mask[i >> 5]! >>> (i & 31)) & 1) === 1 && (expected < 0 || row[i]! > row[expected]!)) expected = i;
      expect(maskedArgmax(row, mask)).toBe(expected);
    }
    expect(maskedArgmax(new Float32Array(40), new Int32Array(2))).toBe(-1);
  });
});
