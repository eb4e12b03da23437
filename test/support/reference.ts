import { Tensor } from '@huggingface/transformers';
import { floatsOf } from '../../src/engine/runtime/float16.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';

/**
 * An independent computation of next-token log-probabilities: a full-prompt forward pass
 * without any cache (transformers.js' own forward, no KvCache of the engine involved), then a
 * softmax written here, in float64.
 */
export async function referenceLogProbs(lm: LanguageModel, ids: readonly number[]): Promise<Float64Array> {
  const n = ids.length;
  const inputs = {
    input_ids: new Tensor('int64', BigInt64Array.from(ids, (i) => BigInt(i)), [1, n]),
    attention_mask: new Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
    position_ids: new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), [1, n]),
  };
  const out = (await lm.model.forward(inputs)) as Record<string, Tensor>;
  for (const t of Object.values(inputs)) t.dispose();
  const logits = out['logits']!;
  const vocab = logits.dims.at(-1)!;
  // floatsOf reads float16 logits (fp16/q4f16 exports) as their values, float32 as a view.
  const row = new Float64Array(floatsOf(logits, (n - 1) * vocab, vocab));
  for (const t of Object.values(out)) t.dispose();
  // Loops, not Math.max(...row) (a 150k-256k vocabulary overflows the call stack as arguments), nor
  // reduce and a mapping Float64Array.from, which cost more than the pass on those vocabularies:
  // the same sums in the same order.
  let max = -Infinity;
  for (const v of row) if (v > max) max = v;
  let z = 0;
  for (let i = 0; i < row.length; i++) z += Math.exp(row[i]! - max);
  const logZ = Math.log(z);
  for (let i = 0; i < row.length; i++) row[i] = row[i]! - max - logZ;
  return row;
}

/**
 * Independent label probabilities: each label's path is scored by full passes, up to the
 * shortest part of it no other label shares (or its whole path, less what continues into longer
 * labels, when it is a prefix of another), then renormalised over answers.
 */
export async function referenceAnswerProbabilities(
  lm: LanguageModel,
  contextIds: readonly number[],
  labels: readonly { answer: string; path: readonly number[] }[],
): Promise<{ answers: string[]; probabilities: number[]; coverage: number }> {
  const cache = new Map<string, Float64Array>();
  const lp = async (path: readonly number[]) => {
    const key = path.join(',');
    if (!cache.has(key)) cache.set(key, await referenceLogProbs(lm, [...contextIds, ...path]));
    return cache.get(key)!;
  };
  const startsWith = (p: readonly number[], q: readonly number[]) => q.every((t, i) => p[i] === t);
  const raw: number[] = [];
  for (const [i, { path }] of labels.entries()) {
    const others = labels.filter((_, j) => j !== i).map((l) => l.path);
    let k = 1;
    while (k < path.length && others.some((o) => startsWith(o, path.slice(0, k)))) k++;
    let p = 1;
    for (let d = 0; d < k; d++) p *= Math.exp((await lp(path.slice(0, d)))[path[d]!]!);
    const identical = others.filter((o) => o.length === path.length && startsWith(o, path)).length;
    const longer = others.filter((o) => o.length > path.length && startsWith(o, path));
    if (k === path.length && longer.length > 0) {
      const next = new Set(longer.map((o) => o[path.length]!));
      const here = await lp(path);
      let cont = 0;
      for (const t of next) cont += Math.exp(here[t]!);
      p *= Math.max(0, 1 - cont);
    }
    raw.push(k === path.length ? p / (identical + 1) : p);
  }
  const answers = [...new Set(labels.map((l) => l.answer))];
  const mass = answers.map((a) => labels.reduce((s, l, i) => (l.answer === a ? s + raw[i]! : s), 0));
  const total = mass.reduce((a, b) => a + b, 0);
  return { answers, probabilities: mass.map((m) => m / total), coverage: total };
}
