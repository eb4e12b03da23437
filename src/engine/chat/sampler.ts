/**
 * Picks the next token from log-probabilities: greedy at temperature 0, otherwise softmax at the
 * temperature, cut to the nucleus (top_p), drawn with a seeded generator so a seed reproduces a text.
 *
 * The values may be the raw logits of a row as well as their log-softmax: the softmax does not
 * change when every value moves by one constant. A grammar's bitmask, when given, rules tokens out
 * as -Infinity would, without a copy of the row: the draw is among the allowed tokens only,
 * gathered word by word (a 32-token word the mask rules out whole is skipped at once), in token
 * order, which is the draw over the whole row with each ruled-out token weighing 0. Between JSON
 * values a grammar allows a few tokens of 150k: the draw then costs what a greedy choice does.
 *
 * Per token this is O(vocabulary) plus a sort of the few candidates the nucleus can contain: with
 * top_p < 1 only tokens whose weight could put them in the nucleus are sorted (the threshold is
 * lowered until the candidates hold top_p of the mass), so the nucleus and the draw are exactly
 * those of sorting the whole vocabulary. With top_p = 1 nothing is sorted: the draw walks the
 * vocabulary in token order, which gives every token its softmax probability.
 */
import { expNonPositive } from '../model/exp-non-positive.ts';

export interface SamplingParams {
  temperature: number;
  topP: number;
}

/** Each round lowers the candidate threshold by this factor (relative to the largest weight). */
const THRESHOLD_STEP = 2 ** -8;

export function sampleToken(values: ArrayLike<number>, params: SamplingParams, random: () => number, mask: Int32Array | null = null): number {
  if (params.temperature === 0) return mask ? maskedArgmax(values, mask) : argmax(values);
  if (mask) {
    // Under a grammar most tokens are ruled out: draw among the allowed ones only, in token order,
    // which is the draw over the whole row with the ruled-out tokens weighing 0.
    const ids = allowedIds(mask, values.length);
    if (ids.length === 0) return maskedArgmax(values, mask); // -1, as greedy: nothing is allowed
    const allowed = idScratchValues(ids.length);
    for (let k = 0; k < ids.length; k++) allowed[k] = values[ids[k]!]!;
    const k = sampleIndex(allowed, params, random);
    return ids[k]!;
  }
  return sampleIndex(values, params, random);
}

/** The index drawn from `values` at a temperature above 0 (a -Infinity weighs 0). */
function sampleIndex(values: ArrayLike<number>, params: SamplingParams, random: () => number): number {
  const n = values.length;
  const t = params.temperature;
  // Division is monotonic: the largest scaled value is the largest value scaled.
  let top = -Infinity;
  for (let i = 0; i < n; i++) if (values[i]! > top) top = values[i]!;
  const max = top / t;
  const weights = scratch(n);
  let total = 0;
  // v / t ≤ max for every token, so the exponent is never positive (exp-non-positive.ts).
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    const w = v === -Infinity ? 0 : expNonPositive(v / t - max);
    weights[i] = w;
    total += w;
  }
  if (params.topP >= 1) return drawInOrder(weights, total, random());

  const nucleus = nucleusOf(weights, total, params.topP);
  let z = 0;
  for (const id of nucleus) z += weights[id]!;
  let r = random() * z;
  for (const id of nucleus) {
    r -= weights[id]!;
    if (r <= 0) return id;
  }
  return nucleus[nucleus.length - 1]!;
}

let idBuffer = new Int32Array(0);
let idValues = new Float64Array(0);
/** The tokens below `n` that `mask` allows, ascending; a word that allows nothing skips its 32 tokens at once. */
function allowedIds(mask: Int32Array, n: number): Int32Array {
  if (idBuffer.length < n) idBuffer = new Int32Array(n);
  let count = 0;
  for (let word = 0; word < mask.length; word++) {
    const bits = mask[word]!;
    if (bits === 0) continue;
    const end = Math.min(n, (word + 1) * 32);
    for (let i = word * 32; i < end; i++) if (((bits >>> (i & 31)) & 1) === 1) idBuffer[count++] = i;
  }
  return idBuffer.subarray(0, count);
}
function idScratchValues(count: number): Float64Array {
  if (idValues.length < count) idValues = new Float64Array(idBuffer.length); // as many as ids can be
  return idValues.subarray(0, count);
}

let buffer = new Float64Array(0);
/**
 * The weights' buffer, kept between tokens: a float64 row of a 150k-token vocabulary is 1.2 MB,
 * which a new array each token would hand to the garbage collector. The sampler is synchronous and
 * nothing it returns refers to the buffer, so one module-level buffer serves every call.
 */
function scratch(n: number): Float64Array {
  if (buffer.length < n) buffer = new Float64Array(n);
  return buffer.subarray(0, n);
}

/** The first token whose cumulative weight (in token order) reaches `u · total`. */
function drawInOrder(weights: Float64Array, total: number, u: number): number {
  let r = u * total;
  let last = 0;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    if (w === 0) continue;
    last = i;
    r -= w;
    if (r <= 0) return i;
  }
  return last; // rounding left a sliver: the last token with any weight
}

/**
 * The smallest prefix of the tokens sorted by weight (descending, ties by id) whose probability
 * mass reaches `topP`. Candidates are the tokens at or above a threshold; once they hold at least
 * `topP` of the mass, every token below the threshold is lighter than every candidate and so
 * cannot come before the cut.
 */
function nucleusOf(weights: Float64Array, total: number, topP: number): number[] {
  const n = weights.length;
  for (let threshold = THRESHOLD_STEP; ; threshold *= THRESHOLD_STEP) {
    const last = threshold < Number.MIN_VALUE; // the final round takes every token
    const candidates: number[] = [];
    let held = 0;
    for (let i = 0; i < n; i++) {
      if (last || weights[i]! >= threshold) {
        candidates.push(i);
        held += weights[i]!;
      }
    }
    if (!last && candidates.length < n && held / total < topP) continue; // the cut lies below the threshold
    candidates.sort((a, b) => weights[b]! - weights[a]! || a - b);
    let mass = 0;
    for (let i = 0; i < candidates.length; i++) {
      mass += weights[candidates[i]!]! / total;
      if (mass >= topP) return candidates.slice(0, i + 1);
    }
    if (last || candidates.length === n) return candidates; // rounding kept the mass just short of topP
  }
}

/**
 * The `k` tokens greedy would take first: the largest values, ties to the lower id, in that order
 * (so the first of them a mask allows is `maskedArgmax` under that mask, as every token not listed
 * comes after all of them); null where a value is NaN (maskedArgmax's order is not this one then).
 */
export function greedyCandidates(values: ArrayLike<number>, k: number): number[] | null {
  const ids: number[] = [];
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    if (v !== v) return null;
    // Scanned in id order, a tie never goes ahead of the id already listed.
    if (ids.length === k && !(v > values[ids[k - 1]!]!)) continue;
    let at = ids.length === k ? k - 1 : ids.length;
    while (at > 0 && v > values[ids[at - 1]!]!) at--;
    if (ids.length === k) ids.pop();
    ids.splice(at, 0, i);
  }
  return ids;
}

/**
 * A draw at a temperature as the argmax of perturbed values (the Gumbel-max trick): writes into
 * `into` each token's `value / temperature + G`, where G is standard Gumbel noise drawn for that
 * token alone from `step` (one 32-bit draw of the reply's generator per step) and its id, by a
 * counter-based hash. The argmax of the result is a draw from the softmax at the temperature, and
 * under a grammar the masked argmax (`maskedArgmax`) is a draw from the masked softmax. As each
 * token's noise does not depend on which other tokens are looked at, the first allowed of the
 * result's `greedyCandidates` is that same masked argmax: a step under a grammar may offer those
 * candidates to its matcher before it fills a mask, and draws the same token either way
 * (chat/constraint.ts), so a seed reproduces a reply whichever way its steps went.
 */
export function gumbelScores(values: ArrayLike<number>, temperature: number, step: number, into: Float64Array): Float64Array {
  const n = values.length;
  const out = into.length === n ? into : into.subarray(0, n);
  for (let i = 0; i < n; i++) {
    const v = values[i]!;
    out[i] = v === -Infinity ? -Infinity : v / temperature + gumbel(step, i);
  }
  return out;
}

/** Standard Gumbel noise of token `id` at `step`: -log(-log u), u uniform in (0, 1) from a hash of both. */
export function gumbel(step: number, id: number): number {
  // lowbias32 (C. Wellons) over the step and the id mixed, twice: a uniform 32-bit value per pair.
  let x = (step ^ Math.imul(id + 1, 0x9e3779b9)) >>> 0;
  for (let r = 0; r < 2; r++) {
    x ^= x >>> 16;
    x = Math.imul(x, 0x7feb352d);
    x ^= x >>> 15;
    x = Math.imul(x, 0x846ca68b);
    x ^= x >>> 16;
  }
  const u = ((x >>> 0) + 0.5) / 4294967296;
  return -Math.log(-Math.log(u));
}

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/**
 * The allowed token with the largest value (the first on ties), as argmax of the masked
 * log-probabilities; -1 when the mask allows nothing. A word of the mask that allows nothing skips
 * its 32 tokens at once. It walks the mask as `allowedIds` does, but reads each value in the same
 * pass: gathering the ids first made greedy under a wide mask 2.5–3× slower (`npm run bench --
 * --only sampler`, 2026-11-29).
 */
export function maskedArgmax(values: ArrayLike<number>, mask: Int32Array): number {
  let best = -1;
  let max = -Infinity;
  const n = values.length;
  for (let word = 0; word < mask.length; word++) {
    const bits = mask[word]!;
    if (bits === 0) continue;
    const end = Math.min(n, (word + 1) * 32);
    for (let i = word * 32; i < end; i++) {
      if (((bits >>> (i & 31)) & 1) === 0) continue;
      const v = values[i]!;
      if (best < 0 || v > max) {
        max = v;
        best = i;
      }
    }
  }
  return best;
}
