/**
 * A prototype of src/engine/sampler.ts `sampleToken` without a full sort (for the profile; the
 * engine is not changed here). The reference builds one object per vocabulary entry and sorts all
 * of them (49,152 for SmolLM2) for every token; at temperature > 0 that costs as much as the forward
 * pass. This version:
 *   1. computes the weights exp(lp/T − max) into a Float64Array and their total in token order
 *      (exactly as the reference);
 *   2. buckets token ids by the binary exponent of their weight (one counting-sort pass), so the
 *      buckets, taken in order, are the reference's descending order, bucket by bucket;
 *   3. sorts only the buckets it visits (weight descending, id ascending — the reference's order)
 *      while walking the nucleus cut (top_p) and the draw.
 * With top_p < 1 it returns exactly the reference's token for the same draw (same nucleus, same
 * summation order). With top_p = 1 it draws against the token-order total instead of the
 * sorted-order one: the same token unless the draw falls within ~1e-16 (relative) of a boundary.
 */
import { argmax, type SamplingParams } from '../../../src/engine/sampler.ts';

const MAX_BUCKET = 1100; // 2^-1100 underflows float64: everything smaller (or 0) shares the last bucket

export function fastSampleToken(logProbs: Float64Array, params: SamplingParams, random: () => number): number {
  if (params.temperature === 0) return argmax(logProbs);
  const n = logProbs.length;
  const t = params.temperature;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const s = logProbs[i]! / t;
    if (s > max) max = s;
  }
  const w = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const x = Math.exp(logProbs[i]! / t - max);
    w[i] = x;
    total += x;
  }
  // counting sort of ids by bucket = floor(-log2 w)
  const bucketOf = new Uint16Array(n);
  const counts = new Uint32Array(MAX_BUCKET + 2);
  for (let i = 0; i < n; i++) {
    const x = w[i]!;
    const b = x > 0 ? Math.min(MAX_BUCKET, Math.floor(-Math.log2(x))) : MAX_BUCKET;
    bucketOf[i] = b;
    counts[b + 1]!++;
  }
  for (let b = 1; b < counts.length; b++) counts[b]! += counts[b - 1]!;
  const start = counts.slice(0, MAX_BUCKET + 1); // start of each bucket
  const ids = new Uint32Array(n);
  const fill = start.slice();
  for (let i = 0; i < n; i++) ids[fill[bucketOf[i]!]!++] = i;
  // Math.log2 rounding can put a weight one bucket off; sorting by weight inside a bucket is exact,
  // and neighbouring buckets are fixed up by merging a boundary element when out of order (rare).
  let sortedUpTo = 0; // ids[0, sortedUpTo) is in final order
  let bucket = 0;
  const before = (a: number, b: number) => w[b]! - w[a]! || a - b;
  const ensureSorted = (k: number): boolean => {
    while (sortedUpTo <= k) {
      if (bucket > MAX_BUCKET) return false;
      const lo = start[bucket]!;
      const hi = bucket === MAX_BUCKET ? n : start[bucket + 1]!;
      bucket++;
      if (hi === lo) continue;
      ids.subarray(lo, hi).sort(before);
      // guard against log2 rounding across the boundary with the previous bucket
      if (lo > 0 && before(ids[lo]!, ids[lo - 1]!) < 0) ids.subarray(0, hi).sort(before);
      sortedUpTo = hi;
    }
    return true;
  };
  let kept = n;
  if (params.topP < 1) {
    let mass = 0;
    for (let i = 0; i < n; i++) {
      ensureSorted(i);
      mass += w[ids[i]!]! / total;
      if (mass >= params.topP) {
        kept = i + 1;
        break;
      }
    }
  }
  let z = 0;
  if (kept < n) for (let i = 0; i < kept; i++) z += w[ids[i]!]!;
  else z = total;
  let r = random() * z;
  for (let i = 0; i < kept; i++) {
    ensureSorted(i);
    r -= w[ids[i]!]!;
    if (r <= 0) return ids[i]!;
  }
  ensureSorted(kept - 1);
  return ids[kept - 1]!;
}
