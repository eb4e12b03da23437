/**
 * The engine worker's per-token profile (engine.worker.ts `profile`): an instrumented copy of the
 * engine's decode loop (src/engine/chat/chat.ts) that splits each step into its parts, with
 * onnxruntime-web's own trace points (ort-trace.ts) inside the session's run.
 */
import { Tensor } from '@huggingface/transformers';
import { argmax, sampleToken } from '../../../src/engine/chat/sampler.ts';
import { KvCache } from '../../../src/engine/model/kv-cache.ts';
import { LanguageModel } from '../../../src/engine/model/language-model.ts';
import { withResidentOutputs } from '../../../src/engine/runtime/resident-outputs.ts';
import { seededRandom } from '../../../src/engine/runtime/seeded-random.ts';
import { median } from '../../lib/schema.ts';
import { traceSet, traceTake } from './ort-trace.ts';

interface SessionLike {
  run(feeds: Record<string, unknown>, options?: unknown): Promise<Record<string, unknown>>;
}
function decoderSession(m: LanguageModel): SessionLike {
  const sessions = (m.model as unknown as { sessions: Record<string, SessionLike> }).sessions;
  const s = sessions['model'] ?? sessions['decoder_model_merged'];
  if (!s) throw new Error('no decoder session');
  return s;
}

/**
 * Per-token profile: an instrumented copy of the decode loop after prefilling `ids`.
 * Each of `steps` decode steps is split into:
 *   inputs      building input_ids / attention_mask / position_ids tensors (JS)
 *   tjs_pre     transformers.js before session.run (validation, feeds)      = forward − run − tjs_post
 *   run         onnxruntime-web InferenceSession.run, of which (env.trace, when `trace`):
 *                 copy_in   malloc + HEAPU8.set of every input (the whole KV cache, every step)
 *                 copy_out  new TypedArray + copy of every output out of wasm memory (KV + logits)
 *                 compute   the rest: the graph, including the in-graph KV Concat
 *   tjs_post    wrapping outputs into transformers.js Tensors
 *   cache       collecting present.* into a KvCache + disposing the previous one
 *   head        where the load took the lm_head out of the graph (kernel-head.ts): the engine's
 *               kernel making the logits from the hidden state (int8-head-kernel.ts; its
 *               embedding row is in `inputs`); 0 where onnxruntime computes them
 *   logsoftmax  LanguageModel.logProbsAt: float64 log-softmax over the vocabulary (JS)
 *   sample      greedy argmax (JS)
 * Also measured once on the last step's distribution: the sampler at temperature 0.7, top_p 0.9.
 */
export async function profileSteps(m: LanguageModel, ids: number[], steps: number, trace: boolean) {
  const session = decoderSession(m);
  const origRun = session.run.bind(session);
  let runMs = 0;
  let runEnd = 0;
  session.run = async (feeds, options) => {
    const r0 = performance.now();
    const out = await origRun(feeds, options);
    runEnd = performance.now();
    runMs = runEnd - r0;
    return out;
  };
  const rows: Record<string, number>[] = [];
  let pass = await m.forward(ids, m.emptyCache(), 1);
  let token = argmax(LanguageModel.logProbsAt(pass.logits, -1));
  pass.logits.dispose();
  let cache = pass.cache;
  let lastLogp: Float64Array | null = null;
  traceSet(trace);
  try {
    for (let s = 0; s < steps; s++) {
      const past = cache.length;
      const total = past + 1;
      const a = performance.now();
      const inputs: Record<string, Tensor> = {
        input_ids: new Tensor('int64', BigInt64Array.from([BigInt(token)]), [1, 1]),
        attention_mask: new Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
        position_ids: new Tensor('int64', BigInt64Array.from([BigInt(past)]), [1, 1]),
      };
      const head = m.kernelHead;
      if (head?.embeds) inputs[head.embeds] = new Tensor('float32', head.kernel.embed([token]), [1, 1, head.kernel.h]);
      const b = performance.now();
      // As LanguageModel.forward runs it: outputs kept in wasm memory (build/ort-patch.mjs).
      const outputs = (await withResidentOutputs(() => m.model.forward({ ...inputs, past_key_values: cache.tensors }))) as Record<string, Tensor>;
      const c = performance.now();
      for (const t of Object.values(inputs)) t.dispose();
      const present: Record<string, Tensor> = Object.create(null);
      let logits: Tensor | undefined;
      let hidden: Tensor | undefined;
      for (const [name, t] of Object.entries(outputs)) {
        if (name === 'logits') logits = t;
        else if (name === head?.hidden) hidden = t;
        else if (name.startsWith('present')) present[name.replace('present', 'past_key_values')] = t;
        else t.dispose();
      }
      cache.dispose();
      cache = new KvCache(present, total);
      const d0 = performance.now();
      if (head && hidden) {
        logits = new Tensor('float32', head.kernel.logits(hidden.data as Float32Array, 1), [1, 1, head.kernel.v]);
        hidden.dispose();
      }
      const d = performance.now();
      const logp = LanguageModel.logProbsAt(logits!, -1);
      logits!.dispose();
      const e = performance.now();
      token = argmax(logp);
      const f = performance.now();
      lastLogp = logp;
      const tr = traceTake();
      const copyIn = tr['ORT::wasm prepareInputOutputTensor'] ?? NaN;
      const copyOut = tr['ORT::wasm ProcessOutputTensor'] ?? NaN;
      rows.push({
        past,
        total: f - a,
        inputs: b - a,
        forward: c - b,
        run: runMs,
        tjs_post: c - runEnd,
        tjs_pre: c - b - runMs - (c - runEnd),
        copy_in: copyIn,
        copy_out: copyOut,
        compute: runMs - copyIn - copyOut,
        cache: d0 - c,
        head: d - d0,
        logsoftmax: e - d,
        sample: f - e,
      });
    }
  } finally {
    traceSet(false);
    session.run = origRun;
    cache.dispose();
  }
  // the non-greedy sampler (chat with temperature > 0) on one real distribution
  const random = seededRandom(1);
  const sampleMs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const s0 = performance.now();
    sampleToken(lastLogp!, { temperature: 0.7, topP: 0.9 }, random);
    sampleMs.push(performance.now() - s0);
  }
  const kvBytesPerToken = m.kvInputs.length * (m.kvInputs[0]?.dims[1] ?? 0) * (m.kvInputs[0]?.dims[3] ?? 0) * 4;
  return { rows, sampler_t07_ms: median(sampleMs), kvBytesPerToken, vocab: lastLogp!.length };
}
