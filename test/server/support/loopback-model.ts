/**
 * What the loopback engines compute with: a real model (onnxruntime-node, through the project's own
 * Engine and LanguageModel), so that the log-probabilities they answer are real. Prompt
 * log-probabilities are computed as a serving engine's prefix cache would: the batch's shared
 * prefix is fed once, then each distinct prompt, then each item's own tokens (no item's numbers
 * depend on the others). Chat is the engine's own chat completion.
 */
import { Engine } from '../../../src/engine/engine.ts';
import type { KvCache } from '../../../src/engine/model/kv-cache.ts';
import { LanguageModel } from '../../../src/engine/model/language-model.ts';
import { loadEngine } from '../../support/models.ts';

export interface LoopbackModel {
  engine: Engine;
  lm: LanguageModel;
  /**
   * For each item, log P(ids[k] | ids[0..k)) for k in [from, ids.length), and the distribution's
   * argmax after the whole item (the token a 1-token generation would sample greedily).
   */
  promptLogProbs(items: readonly { ids: readonly number[]; from: number }[]): Promise<{ logprobs: number[]; ranks: number[]; next: number }[]>;
  /** Forward passes made (the loopback's prefill work). */
  tokensFed(): number;
}

export async function loopbackModel(root: string, model: string): Promise<LoopbackModel> {
  const engine = await loadEngine(root, model, 'fp32', { prefixCacheBytes: 0 });
  const lm = engine.languageModel!;
  return {
    engine,
    lm,
    tokensFed: () => lm.tokensFed,
    async promptLogProbs(items) {
      const caches = new Map<string, KvCache>();
      const made: KvCache[] = [];
      try {
        // The prefix every item's scored part follows: the batch's common prefix, once.
        const heads = items.map((it) => it.ids.slice(0, it.from - 1));
        let shared = Math.min(...heads.map((h) => h.length));
        for (const h of heads) for (let i = 0; i < shared; i++) if (h[i] !== heads[0]![i]) shared = i;
        const base = lm.emptyCache();
        made.push(base);
        let common = base;
        if (shared > 0) {
          const pass = await lm.forward(heads[0]!.slice(0, shared), base, 1);
          pass.logits.dispose();
          common = pass.cache;
          made.push(common);
        }
        const out: { logprobs: number[]; ranks: number[]; next: number }[] = [];
        for (let i = 0; i < items.length; i++) {
          const { ids, from } = items[i]!;
          const head = heads[i]!;
          const key = head.join(',');
          let cache = caches.get(key);
          if (!cache) {
            cache = common;
            if (head.length > shared) {
              const pass = await lm.forward(head.slice(shared), common, 1);
              pass.logits.dispose();
              cache = pass.cache;
              made.push(cache);
            }
            caches.set(key, cache);
          }
          // Rows from position from−1 to the end: row r predicts the token at from + r.
          const pass = await lm.forward(ids.slice(from - 1), cache, 0);
          pass.cache.dispose();
          const logprobs: number[] = [];
          const ranks: number[] = [];
          for (let k = from; k < ids.length; k++) {
            const row = LanguageModel.logProbsAt(pass.logits, k - from);
            const lp = row[ids[k]!]!;
            let rank = 1;
            for (let t = 0; t < row.length; t++) if (row[t]! > lp) rank++;
            logprobs.push(lp);
            ranks.push(rank);
          }
          const next = LanguageModel.argmaxAt(pass.logits, -1);
          pass.logits.dispose();
          out.push({ logprobs, ranks, next });
        }
        return out;
      } finally {
        for (const c of made) c.dispose();
      }
    },
  };
}
