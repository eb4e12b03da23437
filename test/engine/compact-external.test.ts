/**
 * What a kept rewrite reads of the model's own file, gathered into a part of its own
 * (src/engine/graph/compact-external.ts; rewritten-graphs.ts keeps it, so that a return visit does
 * not read the file):
 *
 * - against an independent ONNX decoder (onnx-proto): the compacted graph has the same nodes,
 *   inputs, outputs and initializers (names, types, shapes); every initializer that read the file
 *   now reads exactly the same bytes from the new part, at an aligned offset, and no other changed;
 * - run in onnxruntime-web (the app's bundle, wasm, in Node): the compacted graph, with the new part
 *   mounted and the file not, gives bit for bit the logits of the rewritten graph over the file.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { ALIGN, compactExternal } from '../../src/engine/graph/compact-external.ts';
import { INLINE_WEIGHTS, rewriteSession } from '../../src/engine/load/rewrite-session.ts';
import { loadOrtWeb, promptLogits, type OrtSession, type OrtWeb } from '../support/ort-web.ts';

const ONNX = join(DEFAULT_MODELS_DIR, SPEC.name, 'onnx');
const KEPT = 'kept-part';
const bytesOf = (file: string) => new Uint8Array(readFileSync(join(ONNX, file)));
const decode = (bytes: Uint8Array) => onnxProto.onnx.ModelProto.decode(bytes);
type Tensor = onnxProto.onnx.ITensorProto;
const entries = (t: Tensor) => Object.fromEntries((t.externalData ?? []).map((e) => [e.key, e.value]));
const shape = (t: Tensor) => ({ name: t.name, dataType: t.dataType, dims: (t.dims ?? []).map(Number) });

/** The load's wasm rewrites of `file` with the lm_head kept in the graph (so that its session gives logits). */
function rewritten(file: string) {
  const model = bytesOf(file);
  const rewrite = rewriteSession(model, [], { int8Projections: file === 'model_q4.onnx', int8Head: true }, false);
  expect(rewrite.inline).toBe(true);
  return { model, rewrite };
}

beforeAll(async () => {
  await generateModels({ only: 'tiny' }); // no-op when the stamp is current
});

describe('compactExternal, against an independent ONNX decoder', () => {
  for (const file of ['model.onnx', 'model_quantized.onnx', 'model_q4.onnx']) {
    it(`${file}: the same graph, every initializer of the file reading its own bytes from the new part`, () => {
      const { model, rewrite } = rewritten(file);
      const out = compactExternal(rewrite.graph, INLINE_WEIGHTS, model, KEPT)!;
      expect(out).not.toBeNull();
      const g0 = decode(rewrite.graph).graph!;
      const g1 = decode(out.graph).graph!;
      expect(g1.node).toEqual(g0.node);
      expect(g1.input).toEqual(g0.input);
      expect(g1.output).toEqual(g0.output);
      expect(g1.initializer!.map(shape)).toEqual(g0.initializer!.map(shape));
      let moved = 0;
      let end = 0;
      g0.initializer!.forEach((t0, i) => {
        const t1 = g1.initializer![i]!;
        const e0 = entries(t0);
        if (e0['location'] !== INLINE_WEIGHTS) {
          expect(t1).toEqual(t0);
          return;
        }
        moved++;
        const e1 = entries(t1);
        expect(e1['location']).toBe(KEPT);
        expect(t1.dataLocation).toBe(1);
        const [o0, n0, o1, n1] = [e0['offset'], e0['length'], e1['offset'], e1['length']].map(Number) as [number, number, number, number];
        expect(n1).toBe(n0);
        expect(o1 % ALIGN).toBe(0);
        expect(o1).toBeGreaterThanOrEqual(end);
        end = o1 + n1;
        expect(Buffer.from(out.data.subarray(o1, o1 + n1)).equals(Buffer.from(model.subarray(o0, o0 + n0)))).toBe(true);
      });
      expect(moved).toBeGreaterThan(0);
      expect(out.moved).toBe(moved);
      expect(out.data.byteLength).toBe(end);
    });
  }

  it('a graph with no initializer of that file is left alone; a range past the file\'s end is refused', () => {
    const { model, rewrite } = rewritten('model_q4.onnx');
    expect(compactExternal(rewrite.graph, 'no-such-file', model, KEPT)).toBeNull();
    expect(() => compactExternal(rewrite.graph, INLINE_WEIGHTS, model.subarray(0, 1000), KEPT)).toThrow(/reads bytes .* which has 1000/);
  });
});

describe('the compacted graph in onnxruntime-web', () => {
  let ort: OrtWeb;
  beforeAll(async () => {
    ort = await loadOrtWeb();
  });
  const logits = (session: OrtSession) => promptLogits(ort, session, [1, 17, 42, 7, 99], { kvHeads: SPEC.numKeyValueHeads, headDim: SPEC.headDim }, false);

  for (const file of ['model_quantized.onnx', 'model_q4.onnx']) {
    it(`${file}: the same logits, bit for bit, without the file mounted`, async () => {
      const { model, rewrite } = rewritten(file);
      const out = compactExternal(rewrite.graph, INLINE_WEIGHTS, model, KEPT)!;
      const over = await ort.InferenceSession.create(rewrite.graph, { executionProviders: ['wasm'], externalData: [{ path: INLINE_WEIGHTS, data: model }, ...rewrite.added] });
      const compacted = await ort.InferenceSession.create(out.graph, { executionProviders: ['wasm'], externalData: [...rewrite.added, { path: KEPT, data: out.data }] });
      try {
        const expected = await logits(over);
        expect(expected.length).toBe(5 * SPEC.vocabSize);
        expect(await logits(compacted)).toEqual(expected);
      } finally {
        await over.release();
        await compacted.release();
      }
    });
  }
});
