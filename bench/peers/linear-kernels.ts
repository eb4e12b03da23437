/**
 * One decode step's matrix products, kernel by kernel (docs/threads.md, "Where a q4 step goes"):
 *
 *   npx tsx bench/peers/linear-kernels.ts [--model smollm2-135m-random] [--reps 30]
 *
 * For each projection of a layer of the model (q, k, v, o, gate, up, down), a graph of that
 * product in every layer (distinct weights, so that they stream from memory as in a real step, not
 * from the cache) at M = 1 (one token, as a decode step feeds), written exactly as the generated
 * exports write it (scripts/models/linear-formats.ts: fp32 MatMul, q4 MatMulNBits, q8
 * DynamicQuantizeLinear → MatMulInteger); and the tied lm_head in the four forms a load can give it
 * (the hub's quantizers leave the tied embedding in float32): the export's float32 Gemm, which
 * onnxruntime prepacks; the same matrix held once (src/engine/graph/tied-head.ts, the wasm fp32
 * default); at 8 bits as onnxruntime's MatMulInteger (src/engine/graph/int8-head.ts, the wasm
 * default for float16 heads); and at 8 bits in the engine's own kernel, outside the graph
 * (kernel-head.ts, int8-head-kernel.ts: the wasm default for q4 and q8), each graph written by the
 * engine's own rewrite. Each runs in onnxruntime-web's wasm build (Node, 1
 * thread). Prints the median milliseconds of each, for all the layers, and a step's sum with the head
 * each format gets by default.
 */
import { parseArgs } from 'node:util';
import { formatLinear, formatOpsets, type WeightFormat } from '../../scripts/models/linear-formats.ts';
import { DataType, GraphBuilder } from '../../scripts/models/onnx-graph.ts';
import { MODEL_SPECS } from '../../scripts/models/specs.ts';
import { randomTensor } from '../../scripts/models/weights.ts';
import { INT8_HEAD_WEIGHTS, int8Head } from '../../src/engine/graph/int8-head.ts';
import { kernelHead } from '../../src/engine/graph/kernel-head.ts';
import { TIED_HEAD_WEIGHTS, tiedHead } from '../../src/engine/graph/tied-head.ts';
import { Int8HeadKernel } from '../../src/engine/runtime/int8-head-kernel.ts';
import { headGraph } from '../../test/support/head-graph.ts';
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

/** A head graph as a rewrite left it; for the engine's kernel, what it feeds the graph and computes after it. */
interface HeadForm {
  graph: Uint8Array;
  mount: { path: string; data: Uint8Array } | null;
  feeds?: () => Record<string, unknown>;
  finish?: (out: Record<string, { data: Float32Array | Uint16Array }>) => void;
}

/**
 * Median milliseconds of `reps` runs of each head graph (test/support/head-graph.ts, as rewritten)
 * fed one token, the graphs taking turns run by run, so that a noisy stretch of the machine falls on
 * all of them alike; and each one's fastest run.
 */
async function timeHeads(graphs: Record<string, HeadForm>): Promise<Record<string, { median: number; min: number }>> {
  const forms = Object.values(graphs);
  // One after another: onnxruntime-web mounts external data for the session being created only.
  const sessions = [];
  for (const g of forms) sessions.push(await ort.InferenceSession.create(g.graph, g.mount ? { externalData: [g.mount] } : {}));
  try {
    const ids = () => ({ input_ids: new ort.Tensor('int64', BigInt64Array.of(7n), [1, 1]) });
    const ms: number[][] = sessions.map(() => []);
    for (let i = 0; i < reps + 5; i++) {
      for (const [k, session] of sessions.entries()) {
        const form = forms[k]!;
        const t0 = performance.now();
        const out = await session.run({ ...ids(), ...form.feeds?.() });
        form.finish?.(out);
        if (i >= 5) ms[k]!.push(performance.now() - t0);
        for (const t of Object.values(out)) t.dispose();
      }
    }
    return Object.fromEntries(Object.keys(graphs).map((name, k) => [name, { median: median(ms[k]!), min: Math.min(...ms[k]!) }]));
  } finally {
    for (const session of sessions) await session.release();
  }
}

// The tied embedding and lm_head as the export writes them, then as each rewrite writes them.
const exported = headGraph(weights(spec.vocabSize * h, 3), spec.vocabSize, h, { opset: 17 });
const heldOnce = tiedHead(exported, () => null);
const eightBit = int8Head(exported, () => null);
let kernel: Int8HeadKernel | null = null;
const outside = kernelHead(exported, () => null, (v, hidden) => (kernel = Int8HeadKernel.create(v, hidden)));
if (!heldOnce || !eightBit || !outside || !kernel) throw new Error('the head rewrites did not apply to the head graph');
const k8: Int8HeadKernel = kernel;
const heads = await timeHeads({
  gemm: { graph: exported, mount: null },
  heldOnce: { graph: heldOnce.graph, mount: { path: TIED_HEAD_WEIGHTS, data: heldOnce.weights } },
  eightBit: { graph: eightBit.graph, mount: { path: INT8_HEAD_WEIGHTS, data: eightBit.weights } },
  // The engine's kernel: the embedding row fed to what is left of the graph, the logits computed from its hidden output.
  kernel: {
    graph: outside.graph,
    mount: null,
    feeds: () => ({ [outside.embeds!]: new ort.Tensor('float32', k8.embed([7]), [1, 1, h]) }),
    finish: (out) => void k8.logits(out[outside.hidden]!.data as Float32Array, 1),
  },
});
/** The head a wasm load gives each format by default (session-rewrites.ts `rewritesOn`): q4 and q8 the engine's kernel. */
const defaultHead = (format: WeightFormat): number => (format === 'fp32' ? heads['heldOnce']! : heads['kernel']!).median;
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
const all = ({ median: m, min }: { median: number; min: number }) => Object.fromEntries(FORMATS.map((f) => [f, `${m.toFixed(2)} (min ${min.toFixed(2)})`]));
rows.push({ projection: `lm_head ${h}×${spec.vocabSize}: the export's fp32 Gemm (packed)`, ...all(heads['gemm']!) });
rows.push({ projection: 'lm_head: fp32 held once (tied-head.ts)', ...all(heads['heldOnce']!) });
rows.push({ projection: 'lm_head: 8-bit, MatMulInteger (int8-head.ts)', ...all(heads['eightBit']!) });
rows.push({ projection: "lm_head: 8-bit, the engine's kernel (int8-head-kernel.ts)", ...all(heads['kernel']!) });
rows.push({ projection: 'a step (the layers + the default head)', ...Object.fromEntries(FORMATS.map((f) => [f, (layer[f]! + defaultHead(f)).toFixed(1)])) });
console.log(`${spec.name}: median ms at M = 1 (each projection: in all ${spec.numHiddenLayers} layers; the four heads taking turns, with their fastest run), onnxruntime-web wasm, 1 thread, ${reps} runs each`);
console.table(rows);
