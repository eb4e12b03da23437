/**
 * One decode step's matrix products, kernel by kernel (docs/threads.md, "Where a q4 step goes"):
 *
 *   npx tsx bench/peers/linear-kernels.ts [--model smollm2-135m-random] [--reps 30]
 *
 * For each projection of a layer of the model (q, k, v, o, gate, up, down), a graph of that
 * product in every layer (distinct weights, so that they stream from memory as in a real step, not
 * from the cache) at M = 1 (one token, as a decode step feeds), written exactly as the generated
 * exports write it (scripts/models/linear-formats.ts: fp32 MatMul, q4 MatMulNBits, q8
 * DynamicQuantizeLinear → MatMulInteger); and the tied lm_head, a float32 Gemm in every format (the
 * hub's quantizers leave the tied embedding in float32). Each runs in onnxruntime-web's wasm build
 * (Node, 1 thread). Prints the median milliseconds of each, for all the layers, and a step's sum.
 */
import { parseArgs } from 'node:util';
import { formatLinear, formatOpsets, type WeightFormat } from '../../scripts/models/linear-formats.ts';
import { DataType, GraphBuilder } from '../../scripts/models/onnx-graph.ts';
import { MODEL_SPECS } from '../../scripts/models/specs.ts';
import { randomTensor } from '../../scripts/models/weights.ts';
import { loadOrtWeb } from '../../test/support/ort-web.ts';
import { median } from '../lib/schema.ts';

const { values } = parseArgs({ options: { model: { type: 'string', default: 'smollm2-135m-random' }, reps: { type: 'string', default: '30' } } });
const spec = MODEL_SPECS.find((s) => s.name === values.model);
if (!spec) throw new Error(`no generated model ${values.model}`);
const reps = Number(values.reps);
const h = spec.hiddenSize;
const kv = spec.numKeyValueHeads * spec.headDim;
const PROJECTIONS: [string, number, number][] = [
  ['q', h, spec.numAttentionHeads * spec.headDim],
  ['k', h, kv],
  ['v', h, kv],
  ['o', spec.numAttentionHeads * spec.headDim, h],
  ['gate', h, spec.intermediateSize],
  ['up', h, spec.intermediateSize],
  ['down', spec.intermediateSize, h],
];
const FORMATS: WeightFormat[] = ['fp32', 'q8', 'q4'];

const ort = await loadOrtWeb();

/** The generator's seeded weights (scripts/models/weights.ts); the values do not change a kernel's time. */
const weights = (size: number, seed: number): Float32Array => randomTensor(spec, `linear-kernels.${seed}`, size, 0.02);

/** Median milliseconds of `reps` runs of a graph whose outputs `build` writes, fed x [1, k]. */
async function time(k: number, build: (g: GraphBuilder, x: string) => string[], extraOpsets: { domain: string; version: number }[]): Promise<number> {
  const g = new GraphBuilder('linear');
  const x = g.input('x', DataType.FLOAT, [1, k]);
  for (const y of build(g, x)) g.output(y, DataType.FLOAT, [1, 'n']);
  const session = await ort.InferenceSession.create(g.toModelProto({ irVersion: 8, opset: 17, producerName: 'linear-kernels', producerVersion: '1', extraOpsets }).toBytes());
  try {
    const feed = { x: new ort.Tensor('float32', weights(k, 7), [1, k]) };
    const ms: number[] = [];
    for (let i = 0; i < reps + 5; i++) {
      const t0 = performance.now();
      const out = await session.run(feed);
      if (i >= 5) ms.push(performance.now() - t0);
      for (const t of Object.values(out)) t.dispose();
    }
    return median(ms);
  } finally {
    await session.release();
  }
}

const lmHead = await time(
  h,
  (g, x) => {
    g.floatInit('embed_tokens', [spec.vocabSize, h], weights(spec.vocabSize * h, 3));
    return [g.op('Gemm', [x, 'embed_tokens'], 'lm_head', { transB: 1 })];
  },
  [],
);
const rows: Record<string, string>[] = [];
const layer: Record<string, number> = {};
for (const [name, k, n] of PROJECTIONS) {
  const row: Record<string, string> = { projection: `${name} ${k}×${n}, ×${spec.numHiddenLayers}` };
  // Each layer's weights, generated once for every format (the writers read them, never change them).
  const layers = Array.from({ length: spec.numHiddenLayers }, (_, l) => weights(k * n, 11 + l));
  for (const format of FORMATS) {
    const ms = await time(
      k,
      (g, x) => {
        const linear = formatLinear(g, format);
        return layers.map((w, l) => linear(x, w, k, n, `${name}.${l}`, `/${l}/${name}`));
      },
      formatOpsets(format),
    );
    row[format] = ms.toFixed(2);
    layer[format] = (layer[format] ?? 0) + ms;
  }
  rows.push(row);
}
rows.push({ projection: `lm_head ${h}×${spec.vocabSize} (fp32 Gemm)`, ...Object.fromEntries(FORMATS.map((f) => [f, lmHead.toFixed(2)])) });
rows.push({ projection: 'a step (all of the above)', ...Object.fromEntries(FORMATS.map((f) => [f, (layer[f]! + lmHead).toFixed(1)])) });
console.log(`${spec.name}: median ms at M = 1 (each projection: in all ${spec.numHiddenLayers} layers), onnxruntime-web wasm, 1 thread, ${reps} runs each`);
console.table(rows);
