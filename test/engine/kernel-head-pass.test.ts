/**
 * `LanguageModel.forward` with the lm_head in the engine's kernel (language-model.ts, `kernelHead`):
 * a stand-in decoder whose hidden state is its `embeds` input plus its position, so that what the
 * pass fed and what it read back are both visible. Checked against the kernel called directly:
 *
 * - the pass feeds the embedding rows of exactly its ids, and no `logits` are asked of the graph;
 * - it returns the logits of the last `keep` rows only (all for 0), whether or not the graph sliced
 *   them already, as [1, rows, V];
 * - a long input fed in several passes (`maxPassTokens`) gives the same rows as one pass;
 * - every tensor made along the way is disposed: the ledger is empty after the caller disposes.
 */
import { Tensor, type PreTrainedModel, type PreTrainedTokenizer } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { LanguageModel } from '../../src/engine/model/language-model.ts';
import { Int8HeadKernel } from '../../src/engine/runtime/int8-head-kernel.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

const [V, H] = [41, 20];
const EMBEDS = 'model/embed_tokens/Gather_output_0';
const HIDDEN = 'model/norm/output_0';

function kernel(): Int8HeadKernel {
  const k = Int8HeadKernel.create(V, H)!;
  const random = seededRandom(5);
  for (let v = 0; v < V; v++) {
    for (let h = 0; h < H; h++) k.q[v * k.hp + h] = Math.round((random() * 2 - 1) * 127);
    k.s[v] = Math.fround(0.01 + random() * 0.02);
  }
  return k;
}

/** A decoder whose hidden row i is embeds row i + (its position); `sliced`: it returns only the last `num_logits_to_keep` rows, as a rewritten export does. */
function standIn(sliced: boolean) {
  const fed: Float32Array[] = []; // each pass's embeds, copied (the pass disposes its inputs)
  const inputNames = ['input_ids', 'attention_mask', EMBEDS, 'past_key_values.0.key', 'past_key_values.0.value', ...(sliced ? ['num_logits_to_keep'] : [])];
  const model = {
    config: { vocab_size: V, max_position_embeddings: 128 },
    sessions: { model: { inputNames, inputMetadata: [] } },
    async forward(inputs: Record<string, unknown>) {
      const embeds = inputs[EMBEDS] as Tensor;
      fed.push(Float32Array.from(embeds.data as Float32Array));
      const past = (inputs['past_key_values'] as Record<string, Tensor>)['past_key_values.0.key']!;
      const n = embeds.dims[1]!;
      const start = past.dims[2]!;
      const all = Float32Array.from(embeds.data as Float32Array, (x, i) => x + start + Math.floor(i / H));
      const keep = sliced ? Number((inputs['num_logits_to_keep'] as Tensor).data[0]) : 0;
      const rows = keep > 0 ? keep : n;
      const present = (name: string) => new Tensor('float32', new Float32Array((start + n) * 2), [1, 1, start + n, 2]);
      return {
        [HIDDEN]: new Tensor('float32', all.slice((n - rows) * H), [1, rows, H]),
        'present.0.key': present('k'),
        'present.0.value': present('v'),
      };
    },
    async dispose() {},
  };
  return { model: model as unknown as PreTrainedModel, fed };
}

describe('a pass with the lm_head in the engine kernel', () => {
  for (const sliced of [true, false]) {
    it(`feeds the embedding rows and returns the last keep rows' logits (${sliced ? 'graph slices the rows' : 'graph returns every row'})`, async () => {
      const k = kernel();
      const { model, fed } = standIn(sliced);
      const lm = new LanguageModel('stand-in', model, {} as PreTrainedTokenizer, 'cpu', 'q4');
      lm.kernelHead = { kernel: k, hidden: HIDDEN, embeds: EMBEDS };
      const ids = [3, 40, 0, 17, 3];
      const expectedRows = (from: number, rows: number[]) => {
        const hidden = new Float32Array(rows.length * H);
        rows.forEach((row, r) => {
          const e = k.embed([ids[row]!]);
          for (let h = 0; h < H; h++) hidden[r * H + h] = Math.fround(e[h]! + from + row);
        });
        return Array.from(k.logits(hidden, rows.length));
      };

      const empty = lm.emptyCache();
      for (const keep of [1, 2, 0]) {
        const pass = await lm.forward(ids, empty, keep);
        const rows = keep === 0 ? [0, 1, 2, 3, 4] : ids.map((_, i) => i).slice(-keep);
        expect(pass.logits.dims).toEqual([1, rows.length, V]);
        expect(Array.from(pass.logits.data as Float32Array)).toEqual(expectedRows(0, rows));
        expect(Array.from(fed.at(-1)!)).toEqual(Array.from(k.embed(ids)));
        pass.logits.dispose();
        pass.cache.dispose();
      }

      // In passes of 2 tokens: the same last row as one pass.
      lm.maxPassTokens = 2;
      const split = await lm.forward(ids, empty, 1);
      expect(Array.from(split.logits.data as Float32Array)).toEqual(expectedRows(0, [4]));
      expect(fed.slice(-3).map((f) => f.length / H)).toEqual([2, 2, 1]);
      split.logits.dispose();
      split.cache.dispose();
      empty.dispose();
      expect(lm.ledger.live).toBe(0);
    });
  }
});
