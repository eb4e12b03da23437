/**
 * Picks the next token from log-probabilities: greedy at temperature 0, otherwise softmax at the
 * temperature, cut to the nucleus (top_p), drawn with a seeded generator so a seed reproduces a text.
 */
export interface SamplingParams {
  temperature: number;
  topP: number;
}

export function sampleToken(logProbs: Float64Array, params: SamplingParams, random: () => number): number {
  if (params.temperature === 0) return argmax(logProbs);
  const scaled = Array.from(logProbs, (lp, token) => ({ token, lp: lp / params.temperature }));
  const max = Math.max(...scaled.map((s) => s.lp));
  let total = 0;
  const weighted = scaled.map((s) => {
    const w = Math.exp(s.lp - max);
    total += w;
    return { token: s.token, p: w };
  });
  weighted.sort((a, b) => b.p - a.p || a.token - b.token);
  let kept = weighted.length;
  if (params.topP < 1) {
    let mass = 0;
    for (let i = 0; i < weighted.length; i++) {
      mass += weighted[i]!.p / total;
      if (mass >= params.topP) {
        kept = i + 1;
        break;
      }
    }
  }
  const nucleus = weighted.slice(0, kept);
  const z = nucleus.reduce((s, w) => s + w.p, 0);
  let r = random() * z;
  for (const w of nucleus) {
    r -= w.p;
    if (r <= 0) return w.token;
  }
  return nucleus[nucleus.length - 1]!.token;
}

export function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** A small seeded generator (mulberry32): the same seed gives the same draws on every platform. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
