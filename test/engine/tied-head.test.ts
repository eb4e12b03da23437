/**
 * A tied float32 embedding and lm_head held once, unpacked (src/engine/graph/tied-head.ts), run in
 * onnxruntime-web (the bundle the app ships, wasm, in Node):
 *
 * - `transposeRows` against the definition, at sizes that are and are not a multiple of its block;
 * - a rewritten tied graph (Gather + Gemm transB) against the graph as built: the embedding rows
 *   are E's values bit for bit, the logits the float32 products within rounding, and against a
 *   float64 reference; E is gone from the graph and the new matrix is three-dimensional (which
 *   onnxruntime does not pack);
 * - the forms it leaves alone: an untied lm_head, a Gemm with alpha, a matrix with a third reader;
 * - every generated export whose head stays float32 on wasm, loaded by `withSessionRewrites` as a
 *   wasm load does, against the same load without this rewrite: the logits of several prompts
 *   within float32 rounding, and the same greedy tokens.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateModels } from '../../scripts/models/generate-models.ts';
import { TIED_HEAD_WEIGHTS, tiedHead, transposeRows } from '../../src/engine/graph/tied-head.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { rewritesOn, withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { loadOrtWeb, promptLogitsData, type OrtWeb } from '../support/ort-web.ts';
import { headGraph, runHeadGraph } from '../support/head-graph.ts';
import { GENERATED, TINY } from '../support/models.ts';

let ort: OrtWeb;

beforeAll(async () => {
  await generateModels({ only: 'tiny,families' }); // no-op when the stamps are current
  ort = await loadOrtWeb();
});

function randomMatrix(v: number, h: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: v * h }, () => (random() - 0.5) * 4);
}

describe('transposeRows', () => {
  for (const [v, h] of [
    [37, 24],
    [3000, 40], // more rows than one block of the transpose
  ] as const) {
    it(`[${v}, ${h}] → [${h}, ${v}], value for value, from an unaligned view`, () => {
      const e = randomMatrix(v, h, v);
      // Offset by one byte: the matrix of a mounted file need not sit at a multiple of four.
      const shifted = new Uint8Array(e.byteLength + 1);
      shifted.set(new Uint8Array(e.buffer), 1);
      const out = new Float32Array(v * h);
      transposeRows(shifted.subarray(1), v, h, out);
      for (let r = 0; r < v; r++) for (let k = 0; k < h; k++) if (out[k * v + r] !== e[r * h + k]) expect.fail(`[${k}, ${r}]: ${out[k * v + r]} ≠ ${e[r * h + k]}`);
    });
  }
});

const runHead = (graph: Uint8Array, weights: Uint8Array | null, ids: number[]) => runHeadGraph(ort, graph, weights ? { path: TIED_HEAD_WEIGHTS, data: weights } : null, ids);

describe('a rewritten tied embedding and lm_head', () => {
  const [v, h] = [300, 48];
  const e = randomMatrix(v, h, 7);
  const ids = [5, 3, 299, 0, 5, 150];

  for (const opset of [11, 17, 18]) {
    it(`rows exactly E's, logits the float32 products, E gone and W three-dimensional (opset ${opset})`, async () => {
      const graph = headGraph(e, v, h, { opset });
      const rewrite = tiedHead(graph, () => null)!;
      expect(rewrite).not.toBeNull();
      expect(rewrite.packedBytesAvoided).toBe(v * h * 4);
      expect(rewrite.weights.byteLength).toBe(v * h * 4);
      const text = Buffer.from(rewrite.graph).toString('latin1');
      expect(text).not.toContain('embed.weight');
      expect(rewrite.graph.byteLength).toBeLessThan(graph.byteLength - v * h * 4 + 4096); // the matrix left the graph's bytes
      const { embedded, logits } = await runHead(rewrite.graph, rewrite.weights, ids);
      const rows = ids.flatMap((id) => Array.from(e.subarray(id * h, (id + 1) * h)));
      expect(Array.from(embedded)).toEqual(rows);
      const native = await runHead(graph, null, ids);
      expect(Array.from(native.embedded)).toEqual(rows);
      for (let i = 0; i < ids.length; i++) {
        for (let col = 0; col < v; col++) {
          let exact = 0; // float64
          for (let k = 0; k < h; k++) exact += e[ids[i]! * h + k]! * e[col * h + k]!;
          const got = logits[i * v + col]!;
          // Float32 sums of 48 products of values below 2: within 1e-5 of the float64 sum, as the graph as built is.
          expect(Math.abs(got - exact)).toBeLessThan(1e-5 * (Math.abs(exact) + 1));
          expect(Math.abs(got - native.logits[i * v + col]!)).toBeLessThan(1e-5 * (Math.abs(exact) + 1));
        }
      }
    });
  }

  it('leaves alone an untied lm_head, a Gemm with alpha, and a matrix something else reads too', () => {
    const w = randomMatrix(v, h, 8);
    expect(tiedHead(headGraph(e, v, h, { opset: 17, untied: w }), () => null)).toBeNull();
    expect(tiedHead(headGraph(e, v, h, { opset: 17, alpha: true }), () => null)).toBeNull();
    expect(tiedHead(headGraph(e, v, h, { opset: 17, thirdReader: true }), () => null)).toBeNull();
  });
});

describe('which loads rewrite', () => {
  it('wasm where the head stays float32: fp32 by default, any format with quantizeHead false; never with the int8 head, never on WebGPU', () => {
    expect(rewritesOn('wasm', 'fp32').tiedHead).toBe(true);
    expect(rewritesOn('wasm', 'fp32', true).tiedHead).toBe(false);
    for (const dtype of ['q4', 'q8', 'q4f16', 'fp16'] as const) {
      expect(rewritesOn('wasm', dtype).tiedHead).toBe(false);
      expect(rewritesOn('wasm', dtype, false).tiedHead).toBe(true);
    }
    for (const dtype of ['q4', 'fp32'] as const) expect(rewritesOn('webgpu', dtype, false).tiedHead).toBe(false);
  });
});

const FILES = { fp32: 'model.onnx', q4: 'model_q4.onnx' } as const;
const CASES: [string, keyof typeof FILES][] = [
  [TINY, 'fp32'],
  [TINY, 'q4'],
  [`${TINY}-gqa`, 'fp32'],
  ...['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'].map((m): [string, 'fp32'] => [m, 'fp32']),
];
function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

const PROMPTS = [
  [1, 17, 42, 7, 99],
  [1, 300, 5, 250, 12, 8, 77],
];

describe('every generated export whose head stays float32, loaded as a wasm load does, against the same load without this rewrite', () => {
  for (const [model, format] of CASES) {
    it(`${model} ${format}`, async () => {
      const dir = join(GENERATED, model);
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
      const [v, h] = [config['vocab_size'] as number, config['hidden_size'] as number];
      const heads = config['num_attention_heads'] as number;
      const kv = { kvHeads: (config['num_key_value_heads'] as number | undefined) ?? heads, headDim: (config['head_dim'] as number | undefined) ?? h / heads };
      const tied = config['tie_word_embeddings'] !== false;
      const factory = ort.InferenceSession;
      const load = (tiedHead: boolean) =>
        withSessionRewrites(factory, () => factory.create(new Uint8Array(readFileSync(join(dir, 'onnx', FILES[format])))), null, { int8Projections: true, int8Head: false, tiedHead });
      const plain = await load(false);
      const rewritten = await load(true);
      try {
        expect(plain.report.tiedHead).toBe(0);
        // Tied: the packed copy avoided; untied (phi3): nothing to hold once, left as it is.
        expect(rewritten.report.tiedHead).toBe(tied ? v * h * 4 : 0);
        let worst = 0;
        for (const prompt of PROMPTS) {
          const a = await promptLogitsData(ort, plain.value, prompt, kv, false);
          const b = await promptLogitsData(ort, rewritten.value, prompt, kv, false);
          expect(b.length).toBe(a.length);
          for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!) / (Math.abs(a[i]!) + 1));
          // The same greedy token at every position.
          for (let p = 0; p < prompt.length; p++) {
            expect(argmax(b.subarray(p * v, (p + 1) * v))).toBe(argmax(a.subarray(p * v, (p + 1) * v)));
          }
        }
        console.log(`[tied-head] ${model} ${format}: max |Δ logit| / (|logit| + 1) ${worst.toExponential(2)}`);
        expect(worst).toBeLessThan(1e-5);
      } finally {
        await plain.value.release();
        await rewritten.value.release();
      }
    });
  }
});
