/**
 * The project's one seeded pseudo-random generator (mulberry32): chat sampling with a `seed`, the
 * evaluation's held-out splits, the bench's texts and the tests' seeded inputs. Same seed, same
 * sequence, on every platform (32-bit integer arithmetic only).
 */

/** A function returning uniform doubles in [0, 1), seeded. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A seeded Fisher–Yates shuffle of 0..n−1. */
export function seededPermutation(n: number, seed: number): number[] {
  const random = seededRandom(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}
