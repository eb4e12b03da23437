import { expNonPositive } from './exp-non-positive.ts';

/**
 * Log-softmax of one row of logits, in float64 so that probabilities of labels far down the
 * distribution keep their precision.
 */
export function logSoftmax(logits: ArrayLike<number>, start = 0, length = logits.length - start): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < length; i++) {
    const v = logits[start + i]!;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let i = 0; i < length; i++) sum += expNonPositive(logits[start + i]! - max);
  const logZ = max + Math.log(sum);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = logits[start + i]! - logZ;
  return out;
}
