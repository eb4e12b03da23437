/**
 * `num_logits_to_keep` given at load (src/engine/graph/logits-to-keep.ts), run in onnxruntime-web (the
 * bundle the app ships, wasm, in Node) against the original graph, for every generated export
 * (the Optimum-style Llama in every format, the GQA builder-style export, the five families) and
 * the real TinyStories-656K export: with k = 0 the logits of every row are bit for bit the
 * original's; with k = 1 and k = 3 they are the original's last rows; and the graph is
 * recognised in every case (a graph left alone would compute every row).
 *
 * float16 graphs (fp16, q4f16) within 0.016 instead (twice the measured 0.0078 on logits up to
 * 9.7, the float16 step at 8): on wasm onnxruntime runs their lm_head in float32 between Casts,
 * and in the original graph it removes the Cast pair around the final norm's float16 output (a
 * rounding the graph asks for); with the Slice between them the rounding happens, as written.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateModels } from '../../scripts/models/generate-models.ts';
import { float16ToNumber } from '../../src/engine/runtime/float16.ts';
import { keepLogitsRows, LOGITS_TO_KEEP } from '../../src/engine/graph/logits-to-keep.ts';
import { GENERATED, TINY, TINYSTORIES, VENDORED } from '../support/models.ts';

type Session = {
  inputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, { data: Float32Array | Uint16Array; dims: readonly number[]; dispose(): void }>>;
  release(): Promise<void>;
};
type Ort = {
  InferenceSession: { create(model: Uint8Array, options?: object): Promise<Session> };
  Tensor: new (type: string, data: unknown, dims: number[]) => unknown;
  env: { wasm: { numThreads: number; wasmPaths: string } };
};

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];
/** [root, model, file, external data file or null] */
const CASES: [string, string, string, string | null][] = [
  [GENERATED, TINY, 'model.onnx', null],
  [GENERATED, TINY, 'model_fp16.onnx', 'model_fp16.onnx_data'],
  [GENERATED, TINY, 'model_quantized.onnx', null],
  [GENERATED, TINY, 'model_q4.onnx', null],
  [GENERATED, TINY, 'model_q4f16.onnx', null],
  [GENERATED, `${TINY}-gqa`, 'model.onnx', null],
  [GENERATED, `${TINY}-gqa`, 'model_q4.onnx', null],
  ...FAMILIES.flatMap((m): [string, string, string, null][] => [
    [GENERATED, m, 'model.onnx', null],
    [GENERATED, m, 'model_q4.onnx', null],
  ]),
  [VENDORED, TINYSTORIES, 'model.onnx', null],
];

let ort: Ort;

beforeAll(async () => {
  await generateModels({ only: 'tiny,families' }); // no-op when the stamps are current
  ort = (await import('onnxruntime-web/webgpu')) as unknown as Ort;
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = `${dirname(createRequire(import.meta.url).resolve('onnxruntime-web'))}/`;
});

/**
 * The logits ([1, rows, V]: float32 values, or float16 bit patterns) of a 5-token prompt from an empty
 * cache; `keep` feeds num_logits_to_keep. A copy of the typed array: as a number[] (Array.from) and
 * compared by toEqual, a 151k-262k vocabulary's rows took most of this file's time.
 */
async function logits(session: Session, config: Record<string, number>, float16: boolean, keep: number | null): Promise<{ dims: number[]; values: Float32Array | Uint16Array }> {
  const ids = [1, 17, 42, 7, 99];
  const kvHeads = config['num_key_value_heads'] ?? config['num_attention_heads']!;
  const headDim = config['head_dim'] ?? config['hidden_size']! / config['num_attention_heads']!;
  const feeds: Record<string, unknown> = {};
  for (const name of session.inputNames) {
    if (name === 'input_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    else if (name === 'attention_mask') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map(() => 1n)), [1, ids.length]);
    else if (name === 'position_ids') feeds[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map((_, i) => BigInt(i))), [1, ids.length]);
    else if (name === LOGITS_TO_KEEP) feeds[name] = new ort.Tensor('int64', BigInt64Array.from([BigInt(keep ?? 0)]), []);
    else feeds[name] = new ort.Tensor(float16 ? 'float16' : 'float32', float16 ? new Uint16Array(0) : new Float32Array(0), [1, kvHeads, 0, headDim]);
  }
  const out = await session.run(feeds);
  const result = { dims: [...out['logits']!.dims], values: out['logits']!.data.slice() };
  for (const t of Object.values(out)) t.dispose();
  return result;
}

describe('num_logits_to_keep given at load, in onnxruntime-web', () => {
  for (const [root, model, file, data] of CASES) {
    it(`${model} ${file}: recognised; k = 0 is the original, k = 1 and 3 its last rows`, async () => {
      const dir = join(root, model);
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
      const bytes = new Uint8Array(readFileSync(join(dir, 'onnx', file)));
      const options = data ? { externalData: [{ path: data, data: new Uint8Array(readFileSync(join(dir, 'onnx', data))) }] } : {};
      // q4f16 and fp16 graphs take and give float16.
      const float16 = file.includes('fp16') || file.includes('q4f16');

      const original = await ort.InferenceSession.create(bytes, options);
      expect(original.inputNames).not.toContain(LOGITS_TO_KEEP);
      const all = await logits(original, config, float16, null);
      await original.release();
      const [, rows, vocab] = all.dims as [number, number, number];
      expect(rows).toBe(5);
      expect(vocab).toBe(config['vocab_size']);

      const rewritten = keepLogitsRows(bytes);
      expect(rewritten, 'the graph is recognised').not.toBeNull();
      const session = await ort.InferenceSession.create(rewritten!, options);
      expect(session.inputNames).toContain(LOGITS_TO_KEEP);
      // float16 data are bit patterns: compared as the numbers they stand for.
      const F16_BOUND = 0.016;
      const f16Off = (got: ArrayLike<number>, want: ArrayLike<number>) => {
        let off = 0;
        for (let i = 0; i < got.length; i++) if (!(Math.abs(float16ToNumber(got[i]!) - float16ToNumber(want[i]!)) <= F16_BOUND)) off++;
        return off;
      };
      const whole = await logits(session, config, float16, 0);
      if (float16) {
        expect(whole.dims).toEqual(all.dims);
        expect(f16Off(whole.values, all.values)).toBe(0);
      } else {
        // toEqual's equality (Object.is on each number), element by element.
        expect(whole.dims).toEqual(all.dims);
        expect(whole.values.length).toBe(all.values.length);
        const differs = whole.values.findIndex((v, i) => !Object.is(v, all.values[i]));
        expect(differs, differs < 0 ? '' : `logit ${differs}: ${whole.values[differs]} vs ${all.values[differs]}`).toBe(-1);
      }
      for (const k of [1, 3]) {
        const kept = await logits(session, config, float16, k);
        expect(kept.dims).toEqual([1, k, vocab]);
        const expected = all.values.slice((rows - k) * vocab);
        if (float16) expect(f16Off(kept.values, expected)).toBe(0);
        else {
          let max = 0;
          kept.values.forEach((v, i) => (max = Math.max(max, Math.abs(v - expected[i]!))));
          expect(max).toBeLessThan(1e-5);
        }
      }
      await session.release();
    });
  }

  it('a graph that has the input already, or whose logits come from elsewhere, is left alone', () => {
    const bytes = new Uint8Array(readFileSync(join(GENERATED, TINY, 'onnx', 'model.onnx')));
    const once = keepLogitsRows(bytes)!;
    expect(keepLogitsRows(once)).toBeNull();
    // The logits output renamed: nothing to slice.
    const renamed = bytes.slice();
    const at = Buffer.from(renamed).lastIndexOf(Buffer.from('logits'));
    renamed.set(Buffer.from('logitz'), at);
    expect(keepLogitsRows(renamed)).toBeNull();
  });
});
