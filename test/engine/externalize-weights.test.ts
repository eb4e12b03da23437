/**
 * The load-time rewrite of inline weights into external data (src/engine/graph/externalize-weights.ts)
 * and the session factory around it (src/engine/load/session-rewrites.ts):
 *
 * - checked against an independent ONNX decoder (onnx-proto): the rewritten model has the same
 *   nodes, inputs, outputs and initializers (names, types, shapes), every moved initializer
 *   names exactly the bytes of its original raw_data in the original file, and nothing else moved;
 * - run in onnxruntime-web itself (the bundle the app ships, wasm, in Node): the rewritten graph
 *   with the original file mounted as its external data gives bit for bit the logits of the
 *   original, for every generated format; `withSessionRewrites` rewrites, releases the bytes, and
 *   puts the factory back.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { externalizeWeights, MIN_EXTERNAL_BYTES } from '../../src/engine/graph/externalize-weights.ts';
import { INLINE_WEIGHTS, withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { loadOrtWeb, promptLogits, type OrtSession, type OrtWeb } from '../support/ort-web.ts';

const ONNX = join(DEFAULT_MODELS_DIR, SPEC.name, 'onnx');
/** The generated formats whose weights are inline (fp16 ships them as external data already). */
const INLINE = ['model.onnx', 'model_quantized.onnx', 'model_q4.onnx', 'model_q4f16.onnx'];
const EXTERNAL = 1;

type Tensor = onnxProto.onnx.ITensorProto;

const bytesOf = (file: string) => new Uint8Array(readFileSync(join(ONNX, file)));
const decode = (bytes: Uint8Array) => onnxProto.onnx.ModelProto.decode(bytes);
const rawLength = (t: Tensor) => t.rawData?.length ?? 0;
const entries = (t: Tensor) => Object.fromEntries((t.externalData ?? []).map((e) => [e.key, e.value]));
const shape = (t: Tensor) => ({ name: t.name, dataType: t.dataType, dims: (t.dims ?? []).map(Number) });

beforeAll(async () => {
  await generateModels({ only: 'tiny' }); // no-op when the stamp is current
});

describe('externalizeWeights, against an independent ONNX decoder', () => {
  for (const file of INLINE) {
    it(`${file}: the same graph, every large initializer pointing at its own bytes in the original file`, () => {
      const original = bytesOf(file);
      const out = externalizeWeights(original, INLINE_WEIGHTS);
      expect(out).not.toBeNull();
      const before = decode(original);
      const after = decode(out!.graph);
      const g0 = before.graph!;
      const g1 = after.graph!;

      // Everything but the initializers' data is the same.
      expect(after.irVersion).toEqual(before.irVersion);
      expect(after.opsetImport).toEqual(before.opsetImport);
      expect(g1.node).toEqual(g0.node);
      expect(g1.input).toEqual(g0.input);
      expect(g1.output).toEqual(g0.output);
      expect(g1.initializer!.map(shape)).toEqual(g0.initializer!.map(shape));

      let moved = 0;
      let movedBytes = 0;
      g0.initializer!.forEach((t0, i) => {
        const t1 = g1.initializer![i]!;
        if (rawLength(t0) < MIN_EXTERNAL_BYTES) {
          // Small ones stay as they were.
          expect(t1).toEqual(t0);
          return;
        }
        moved++;
        movedBytes += rawLength(t0);
        expect(t1.dataLocation).toBe(EXTERNAL);
        expect(rawLength(t1)).toBe(0);
        const e = entries(t1);
        expect(e['location']).toBe(INLINE_WEIGHTS);
        const offset = Number(e['offset']);
        const length = Number(e['length']);
        expect(length).toBe(rawLength(t0));
        expect(Buffer.from(original.subarray(offset, offset + length)).equals(Buffer.from(t0.rawData!))).toBe(true);
      });
      expect(moved).toBeGreaterThan(0);
      expect(out!.moved).toBe(moved);
      expect(out!.movedBytes).toBe(movedBytes);
      // What remains is the graph: a small fraction of the file.
      expect(out!.graph.length).toBeLessThan(original.length - movedBytes + 4096);
    });
  }

  it('a model whose weights are already external, or too small to move, is left alone (null)', () => {
    expect(externalizeWeights(bytesOf('model_fp16.onnx'), INLINE_WEIGHTS)).toBeNull();
    expect(externalizeWeights(bytesOf('model.onnx'), INLINE_WEIGHTS, Number.MAX_SAFE_INTEGER)).toBeNull();
  });

  it('a truncated file is refused, naming what is wrong', () => {
    const original = bytesOf('model.onnx');
    expect(() => externalizeWeights(original.subarray(0, 1000), INLINE_WEIGHTS)).toThrow(/ONNX model: /);
  });
});

describe('onnxruntime-web runs the rewritten graph exactly as the original', () => {
  let ort: OrtWeb;

  beforeAll(async () => {
    ort = await loadOrtWeb();
  });

  /** The logits of a 5-token prompt from an empty cache. */
  const logits = (session: OrtSession, float16: boolean) => promptLogits(ort, session, [1, 17, 42, 7, 99], { kvHeads: SPEC.numKeyValueHeads, headDim: SPEC.headDim }, float16);

  for (const file of INLINE) {
    it(`${file}: bit for bit the same logits`, async () => {
      const float16 = file.includes('f16');
      const original = await ort.InferenceSession.create(bytesOf(file));
      const expected = await logits(original, float16);
      expect(expected.length).toBe(5 * SPEC.vocabSize);
      await original.release();

      const bytes = bytesOf(file);
      const rewritten = externalizeWeights(bytes, INLINE_WEIGHTS)!;
      const session = await ort.InferenceSession.create(rewritten.graph, { externalData: [{ path: INLINE_WEIGHTS, data: bytes }] });
      expect(await logits(session, float16)).toEqual(expected);
      await session.release();
    });
  }

  it('withSessionRewrites: rewrites what the load creates, releases its bytes, and puts the factory back', async () => {
    const factory = ort.InferenceSession;
    const create = factory.create;
    const bytes = bytesOf('model.onnx');
    const size = bytes.byteLength;
    const expected = externalizeWeights(bytesOf('model.onnx'), INLINE_WEIGHTS)!;
    const { value: session, report } = await withSessionRewrites(factory, () => factory.create(bytes, {}));
    expect(factory.create).toBe(create);
    expect(report).toEqual({ sessions: 1, bytes: expected.movedBytes, logitsToKeep: 1, int8Projections: 0, int8Head: { embedding: false, lmHead: false, engineKernel: false, floatBytesDropped: 0, int8Bytes: 0 }, kernelHead: null, tiedHead: 0, released: size, collected: null, fusedAttention: [] });
    // Released: the file's buffer is detached (its memory freed), the session has its own weights.
    expect(bytes.byteLength).toBe(0);
    const reference = await create.call(factory, bytesOf('model.onnx'));
    expect(await logits(session, false)).toEqual(await logits(reference, false));
    await session.release();
    await reference.release();
  });

  it('withSessionRewrites in a worker: returns before the collection it prompts is over, which then sets report.collected', async () => {
    const factory = ort.InferenceSession;
    const scope = globalThis as { WorkerGlobalScope?: unknown };
    scope.WorkerGlobalScope = class {};
    try {
      const { value: session, report, collecting } = await withSessionRewrites(factory, () => factory.create(bytesOf('model.onnx'), {}));
      // Released buffers, so a collection is prompted; the load did not wait for it (at least 8 turns of the event loop).
      expect(report.released).toBeGreaterThan(0);
      expect(collecting).not.toBeNull();
      expect(report.collected).toBeNull();
      const collected = await collecting;
      expect(typeof collected).toBe('boolean');
      expect(report.collected).toBe(collected);
      await session.release();
    } finally {
      delete scope.WorkerGlobalScope;
    }
  });

  it('withSessionRewrites: a failed load puts the factory back and releases nothing', async () => {
    const factory = ort.InferenceSession;
    const create = factory.create;
    const bytes = bytesOf('model.onnx');
    const broken = bytes.slice();
    // A graph whose first node names an operator no runtime has: the rewrite succeeds, the session does not.
    const at = Buffer.from(broken).indexOf(Buffer.from('MatMul'));
    broken.set(Buffer.from('MutMal'), at);
    await expect(withSessionRewrites(factory, () => factory.create(broken, {}))).rejects.toThrow();
    expect(factory.create).toBe(create);
    expect(broken.byteLength).toBe(bytes.byteLength);
  });
});
