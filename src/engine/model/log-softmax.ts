import { expNonPositive } from './exp-non-positive.ts';

/**
 * log Z of one row of logits (its log-sum-exp), in float64: the largest logit plus the log of the
 * sum of each one's exponential less it.
 */
export function logNormalizer(logits: ArrayLike<number>, start = 0, length = logits.length - start): number {
  let max = -Infinity;
  for (let i = 0; i < length; i++) {
    const v = logits[start + i]!;
    if (v > max) max = v;
  }
  let sum = 0;
  for (let i = 0; i < length; i++) sum += expNonPositive(logits[start + i]! - max);
  return max + Math.log(sum);
}

/**
 * Log-softmax of one row of logits, in float64 so that probabilities of labels far down the
 * distribution keep their precision.
 */
export function logSoftmax(logits: ArrayLike<number>, start = 0, length = logits.length - start): Float64Array {
  const logZ = logNormalizer(logits, start, length);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = logits[start + i]! - logZ;
  return out;
}

/** A row's log-probabilities, read one token at a time: what a `logSoftmax` array holds, or a `LogProbRow`. */
export interface LogProbs {
  at(id: number): number | undefined;
}

/**
 * One row's log-probabilities read where they are needed, without writing the whole row: `at(id)`
 * is `logits[id] − log Z`, the same float64 value `logSoftmax` writes at `id`. For a reader of a few
 * tokens a step (an extraction's value under its mask), it saves writing, and collecting, a float64
 * array of the vocabulary's size at every step of every row. It reads the logits it was given, so
 * it is read before they are disposed.
 */
export class LogProbRow implements LogProbs {
  readonly logZ: number;

  constructor(
    private readonly logits: ArrayLike<number>,
    private readonly start = 0,
    readonly length = logits.length - start,
  ) {
    this.logZ = logNormalizer(logits, start, length);
  }

  at(id: number): number | undefined {
    return id >= 0 && id < this.length ? this.logits[this.start + id]! - this.logZ : undefined;
  }
}
