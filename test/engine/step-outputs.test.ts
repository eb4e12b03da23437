/**
 * Step outputs (src/engine/graph/step-outputs.ts), run in onnxruntime-node (where the in-process
 * server's sessions get them) against the original graph, for every generated export whose cache
 * is a Concat (the tiny Llama in its float32, int8, 4-bit and float16 formats, the five families)
 * and the real TinyStories-656K export: over a cache of 3 positions and 2 new tokens, every step
 * output is bit for bit the last 2 positions of its `present` output, and the logits and `present`
 * outputs are the original's bit for bit. A GroupQueryAttention export (a cache of its own) and a
 * graph that has them already are left alone.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { withStepOutputs } from '../../src/engine/graph/step-outputs.ts';
import { stepOutputName } from '../../src/engine/runtime/step-output-names.ts';
import { GENERATED, TINY, TINYSTORIES, VENDORED } from '../support/models.ts';
import { FAMILIES } from '../support/generated-exports.ts';

/** [root, model, file] */
const CASES: [string, string, string][] = [
  [GENERATED, TINY, 'model.onnx'],
  [GENERATED, TINY, 'model_quantized.onnx'],
  [GENERATED, TINY, 'model_q4.onnx'],
  [GENERATED, TINY, 'model_q4f16.onnx'],
  ...FAMILIES.map((m): [string, string, string] => [GENERATED, m, 'model.onnx']),
  [VENDORED, TINYSTORIES, 'model.onnx'],
];

const PAST = [5, 17, 42];
const NEW = [7, 99];

/** Every output of a pass over NEW after a cache of PAST (computed by the same session), as arrays. */
async function run(graph: Uint8Array): Promise<{ names: string[]; out: Record<string, { data: ArrayLike<number>; dims: readonly number[] }> }> {
  const s = await ort.InferenceSession.create(graph, { intraOpNumThreads: 1 });
  try {
    const feeds = (ids: number[], at: number, past: Record<string, ort.Tensor>) => {
      const f: Record<string, ort.Tensor> = {};
      for (const name of s.inputNames) {
        if (name === 'input_ids') f[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
        else if (name === 'attention_mask') f[name] = new ort.Tensor('int64', new BigInt64Array(at + ids.length).fill(1n), [1, at + ids.length]);
        else if (name === 'position_ids') f[name] = new ort.Tensor('int64', BigInt64Array.from(ids.map((_, i) => BigInt(at + i))), [1, ids.length]);
        else if (name.startsWith('past_key_values')) {
          if (past[name]) f[name] = past[name];
          else {
            const meta = s.inputMetadata.find((m) => m.name === name) as { shape?: (number | string)[]; type?: string };
            const dims = (meta.shape ?? []).map((d, k) => (typeof d === 'number' ? d : k === 2 ? 0 : 1));
            f[name] = meta.type === 'float16' ? new ort.Tensor('float16', new Uint16Array(0), dims) : new ort.Tensor('float32', new Float32Array(0), dims);
          }
        }
      }
      return f;
    };
    const first = await s.run(feeds(PAST, 0, {}));
    const past: Record<string, ort.Tensor> = {};
    for (const [name, t] of Object.entries(first)) if (name.startsWith('present')) past[name.replace('present', 'past_key_values')] = t;
    const out = await s.run(feeds(NEW, PAST.length, past));
    return { names: [...s.outputNames], out: out as never };
  } finally {
    await s.release();
  }
}

describe('step outputs', () => {
  for (const [root, model, file] of CASES) {
    it(`${model}/${file}: each is the last positions of its present output; logits and cache as the original's`, async () => {
      const original = new Uint8Array(readFileSync(join(root, model, 'onnx', file)));
      const stepped = withStepOutputs(original);
      expect(stepped).not.toBeNull();
      expect(withStepOutputs(stepped!)).toBeNull(); // already there
      const want = await run(original);
      const got = await run(stepped!);
      const presents = want.names.filter((n) => n.startsWith('present'));
      expect(presents.length).toBeGreaterThan(0);
      expect(got.names).toEqual([...want.names, ...presents.map(stepOutputName)]);
      for (const name of want.names) {
        expect(got.out[name]!.dims, name).toEqual(want.out[name]!.dims);
        expect(Buffer.compare(Buffer.from(new Uint8Array((got.out[name]!.data as Float32Array).buffer)), Buffer.from(new Uint8Array((want.out[name]!.data as Float32Array).buffer))), name).toBe(0);
      }
      for (const name of presents) {
        const present = got.out[name]!;
        const step = got.out[stepOutputName(name)]!;
        const [b, h, seq, d] = present.dims as [number, number, number, number];
        expect(seq).toBe(PAST.length + NEW.length);
        expect(step.dims).toEqual([b, h, NEW.length, d]);
        // Row (batch, head) of the step against the last NEW.length positions of the same row of the cache.
        for (let rh = 0; rh < b * h; rh++)
          for (let k = 0; k < NEW.length * d; k++) expect(step.data[rh * NEW.length * d + k], `${name} ${rh} ${k}`).toBe(present.data[(rh * seq + PAST.length) * d + k]);
      }
    }, 60_000);
  }

  it('leaves a GroupQueryAttention export alone (its cache is updated by the attention, not a Concat)', () => {
    expect(withStepOutputs(new Uint8Array(readFileSync(join(GENERATED, `${TINY}-gqa`, 'onnx', 'model.onnx'))))).toBeNull();
  });
});
