/**
 * Every value's shape named in the graph's `value_info` (src/engine/graph/symbolic-shapes.ts),
 * checked against what onnxruntime itself computes:
 *
 * - the graphs the load makes (every generated family, fp32 and q4, the wasm and WebGPU rewrites,
 *   and TinyStories-656K, a hub model), each value made a graph output in a copy read by an
 *   independent decoder (onnx-proto), run in onnxruntime-web (wasm, in Node) at three sizes of
 *   batch, new tokens and cached tokens: every annotated value has, at each size, the element type
 *   and the dimensions its `value_info` says, the symbols evaluated at that size;
 * - most values are annotated (a graph whose shapes this stopped following would fail here);
 * - the session of the annotated graph gives the same logits and cache, bit for bit;
 * - where onnxruntime refuses a graph with them, the session is created once more without them
 *   (session-rewrites.ts), and an error without them is not retried;
 * - the dimension algebra (symbolic-dims.ts) against hand-computed cases.
 *
 * How much faster the session is created is measured by the bench (`npm run bench -- --only load`),
 * not here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { FAMILY_SPECS } from '../../scripts/models/families.ts';
import { TINY_RANDOM_LLAMA } from '../../scripts/models/specs.ts';
import { readGraph } from '../../src/engine/graph/onnx-graph.ts';
import { annotateShapes, withoutShapes } from '../../src/engine/graph/symbolic-shapes.ts';
import { add, constant, div, mul, quotient, sub, symbol, textOf } from '../../src/engine/graph/symbolic-dims.ts';
import { INLINE_WEIGHTS, rewriteSession } from '../../src/engine/load/rewrite-session.ts';
import { rewritesOn, withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { loadOrtWeb, type OrtWeb } from '../support/ort-web.ts';

type Mounted = { path: string; data: Uint8Array };
const TYPE_NAMES: Record<string, number> = { float32: 1, uint8: 2, int8: 3, int32: 6, int64: 7, bool: 9, float16: 10 };

let ort: OrtWeb;
beforeAll(async () => {
  await generateModels({ only: ['tiny', 'families'] }); // no-ops when the stamps are current
  ort = await loadOrtWeb();
});

const MODELS = [TINY_RANDOM_LLAMA.name, `${TINY_RANDOM_LLAMA.name}-gqa`, ...FAMILY_SPECS.map((s) => s.name)];
const fileOf = (model: string, file: string) =>
  model === 'TinyStories-656K' ? join('vendor/models/TinyStories-656K/onnx', file) : join(DEFAULT_MODELS_DIR, model, 'onnx', file);

/** The graph a load on `device` runs for `file` (`kernel`: with the lm_head and embedding taken by the engine's kernel, as the first session of a load on wasm), with what it mounts. */
function loaded(model: string, file: string, device: 'wasm' | 'webgpu', kernel = false) {
  const bytes = new Uint8Array(readFileSync(fileOf(model, file)));
  const rewrite = rewriteSession(bytes, [], rewritesOn(device, file === 'model.onnx' ? 'fp32' : 'q4'), kernel);
  if (kernel) expect(rewrite.counts.kernelHead?.embeds).toBeTruthy();
  const mounts: Mounted[] = [...(rewrite.inline ? [{ path: INLINE_WEIGHTS, data: bytes }] : []), ...rewrite.added.map((f) => ({ path: f.path, data: f.data as Uint8Array }))];
  return { graph: rewrite.graph, mounts, shapes: rewrite.counts.shapes };
}

/** A symbolic dimension's text (`past_sequence_length + sequence_length`, `2*batch_size`) evaluated at `sizes`. */
function evaluate(text: string, sizes: Record<string, number>): number {
  return text
    .replace(/ - /g, ' + -')
    .split(' + ')
    .reduce((sum, term) => {
      const negative = term.startsWith('-');
      const product = (negative ? term.slice(1) : term).split('*').reduce((p, f) => {
        const v = sizes[f] ?? Number(f);
        if (Number.isNaN(v)) throw new Error(`unknown symbol ${f} in ${text}`);
        return p * v;
      }, 1);
      return sum + (negative ? -product : product);
    }, 0);
}

/** Feeds for the graph's inputs at `sizes` (ids, mask, positions, an empty or filled cache). */
function feeds(inputs: onnxProto.onnx.IValueInfoProto[], sizes: Record<string, number>) {
  const out: Record<string, unknown> = {};
  const { batch_size: b, sequence_length: s, past_sequence_length: p } = sizes as Record<string, number>;
  for (const input of inputs) {
    const name = input.name!;
    const dims = (input.type!.tensorType!.shape!.dim ?? []).map((d) => (d.dimParam ? evaluate(d.dimParam, sizes) : Number(d.dimValue)));
    const count = dims.reduce((x, y) => x * y, 1);
    const type = input.type!.tensorType!.elemType!;
    if (name === 'position_ids') out[name] = new ort.Tensor('int64', BigInt64Array.from({ length: count }, (_, i) => BigInt(p! + (i % s!))), dims);
    else if (name === 'input_ids') out[name] = new ort.Tensor('int64', BigInt64Array.from({ length: count }, (_, i) => BigInt(1 + ((i * 7) % 50))), dims);
    else if (type === 7) out[name] = new ort.Tensor('int64', BigInt64Array.from({ length: count }, () => 1n), dims);
    else if (type === 10) out[name] = new ort.Tensor('float16', new Uint16Array(count), dims);
    else out[name] = new ort.Tensor('float32', Float32Array.from({ length: count }, (_, i) => Math.sin(i + b!)), dims);
  }
  return out;
}

const withTotal = (sizes: { batch_size: number; sequence_length: number; past_sequence_length: number }[]) =>
  sizes.map((s) => ({ ...s, total_sequence_length: s.sequence_length + s.past_sequence_length }));
const SIZES = withTotal([
  { batch_size: 2, sequence_length: 5, past_sequence_length: 11 },
  { batch_size: 3, sequence_length: 7, past_sequence_length: 13 },
  { batch_size: 1, sequence_length: 1, past_sequence_length: 0 },
]);
/** GroupQueryAttention takes more than one new token over a cache only in a batch of one. */
const GQA_SIZES = withTotal([
  { batch_size: 1, sequence_length: 5, past_sequence_length: 11 },
  { batch_size: 1, sequence_length: 7, past_sequence_length: 0 },
  { batch_size: 3, sequence_length: 1, past_sequence_length: 13 },
]);

const CASES: { model: string; file: string; device: 'wasm' | 'webgpu'; kernel?: boolean }[] = [
  ...MODELS.flatMap((model) => [
    { model, file: 'model.onnx', device: 'wasm' as const },
    { model, file: 'model_q4.onnx', device: 'wasm' as const },
  ]),
  { model: TINY_RANDOM_LLAMA.name, file: 'model_q4.onnx', device: 'wasm' as const, kernel: true },
  { model: TINY_RANDOM_LLAMA.name, file: 'model.onnx', device: 'webgpu' as const },
  { model: 'TinyStories-656K', file: 'model.onnx', device: 'wasm' as const },
];

describe('named shapes against onnxruntime', () => {
  for (const { model, file, device, kernel } of CASES) {
    it(`${model} ${file} (${device}${kernel ? ', the head in the engine’s kernel' : ''}): every annotated value has the type and dimensions onnxruntime computes`, async () => {
      const { graph, mounts, shapes } = loaded(model, file, device, kernel);
      const decoded = onnxProto.onnx.ModelProto.decode(graph);
      const g = decoded.graph!;
      const annotated = new Map(g.valueInfo!.map((v) => [v.name!, v.type!.tensorType!]));
      expect(annotated.size).toBe(shapes);
      const declared = new Set(g.output!.map((o) => o.name!));
      const produced = g.node!.flatMap((n) => n.output!.filter((o) => o !== ''));
      // Every graph is followed to its lm_head (the graph's outputs have their own entries; the rows
      // kept for the logits are counted from the end, which is not followed); the fused-attention ones to the attention.
      const gqa = model.endsWith('-gqa');
      expect(annotated.size / produced.filter((o) => !declared.has(o)).length).toBeGreaterThan(gqa ? 0.5 : 0.9);
      // Each value a graph output, so that the run reports its shape.
      const outputs = new Set(g.output!.map((o) => o.name!));
      for (const name of produced) if (!outputs.has(name)) g.output!.push(onnxProto.onnx.ValueInfoProto.create({ name }));
      const probe = onnxProto.onnx.ModelProto.encode(decoded).finish();
      const session = await ort.InferenceSession.create(probe, { executionProviders: ['wasm'], externalData: mounts, graphOptimizationLevel: 'disabled' });
      let checked = 0;
      try {
        for (const sizes of gqa ? GQA_SIZES : SIZES) {
          const out = (await session.run(feeds(g.input!, sizes))) as unknown as Record<string, { type: string; dims: readonly number[]; dispose(): void }>;
          for (const [name, t] of annotated) {
            const ran = out[name];
            if (!ran) continue;
            const said = (t.shape!.dim ?? []).map((d) => (d.dimParam ? evaluate(d.dimParam, sizes) : Number(d.dimValue)));
            expect({ name, type: t.elemType, dims: said }).toEqual({ name, type: TYPE_NAMES[ran.type], dims: [...ran.dims] });
            checked++;
          }
          for (const t of Object.values(out)) t.dispose();
        }
      } finally {
        await session.release();
      }
      expect(checked).toBe(annotated.size * SIZES.length);
      expect(GQA_SIZES.length).toBe(SIZES.length);
    }, 120_000);
  }
});

describe('the annotated session', () => {
  for (const file of ['model.onnx', 'model_q4.onnx']) {
    it(`${TINY_RANDOM_LLAMA.name} ${file}: the same logits and cache, bit for bit`, async () => {
      const { graph, mounts } = loaded(TINY_RANDOM_LLAMA.name, file, 'wasm');
      const decoded = onnxProto.onnx.ModelProto.decode(graph);
      const plain = onnxProto.onnx.ModelProto.decode(graph);
      plain.graph!.valueInfo = [];
      expect(decoded.graph!.valueInfo!.length).toBeGreaterThan(0);
      const sizes = SIZES[0]!;
      const results: Record<string, number[]>[] = [];
      for (const bytes of [onnxProto.onnx.ModelProto.encode(plain).finish(), graph]) {
        const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], externalData: mounts });
        const out = (await session.run(feeds(decoded.graph!.input!, sizes))) as Record<string, { data: Float32Array; dispose(): void }>;
        results.push(Object.fromEntries(Object.entries(out).map(([k, t]) => [k, Array.from(t.data)])));
        for (const t of Object.values(out)) t.dispose();
        await session.release();
      }
      expect(Object.keys(results[1]!).sort()).toEqual(Object.keys(results[0]!).sort());
      for (const k of Object.keys(results[0]!)) expect(results[1]![k], k).toEqual(results[0]![k]);
    }, 120_000);
  }

  it('a graph with nothing to follow is left as it is', () => {
    // A graph whose only node is of an operator this does not know.
    const model = onnxProto.onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'g',
        node: [{ opType: 'Unknown', domain: 'x.y', input: ['a'], output: ['b'] }],
        input: [{ name: 'a', type: { tensorType: { elemType: 1, shape: { dim: [{ dimParam: 'n' }] } } } }],
        output: [{ name: 'b' }],
      },
    });
    expect(annotateShapes(onnxProto.onnx.ModelProto.encode(model).finish())).toBeNull();
  });
});

describe('dimensions as polynomials', () => {
  const [b, s, p] = [symbol('batch_size'), symbol('sequence_length'), symbol('past_sequence_length')];
  it('names a sum and a product the same way whatever their order', () => {
    expect(textOf(add(s, p))).toBe(textOf(add(p, s)));
    expect(textOf(add(s, p))).toBe('past_sequence_length + sequence_length');
    expect(textOf(mul(constant(9), mul(s, b)))).toBe('9*batch_size*sequence_length');
    expect(textOf(sub(add(s, constant(3)), constant(3)))).toBe('sequence_length');
    expect(textOf(sub(constant(2), s))).toBe('-sequence_length + 2');
  });
  it('divides a reshape’s -1 out, cancelling equal factors, and only where it divides', () => {
    // [b, 9, s, 64] → [0, 3, 3, -1, 64]: the -1 is s.
    expect(textOf(quotient([b, constant(9), s, constant(64)], [b, constant(3), constant(3), constant(64)])!)).toBe('sequence_length');
    // [b, s + p, 576] → [b, -1, 9, 64]: s + p.
    expect(textOf(quotient([b, add(s, p), constant(576)], [b, constant(9), constant(64)])!)).toBe('past_sequence_length + sequence_length');
    expect(quotient([b, s, constant(10)], [b, constant(4)])).toBeNull();
    expect(quotient([b, s], [p])).toBeNull();
    expect(div(mul(constant(6), s), constant(4))).toBeNull();
    expect(textOf(div(mul(constant(6), s), constant(3))!)).toBe('2*sequence_length');
  });
});

describe('where onnxruntime refuses the named shapes', () => {
  it('the session is created once more from the graph as it was before them, with the default memory pattern', async () => {
    const bytes = new Uint8Array(readFileSync(fileOf(TINY_RANDOM_LLAMA.name, 'model_q4.onnx')));
    const calls: { entries: number; options: Record<string, unknown> }[] = [];
    const factory = {
      create: async (graph: Uint8Array, options: Record<string, unknown>) => {
        const entries = onnxProto.onnx.ModelProto.decode(graph).graph!.valueInfo!.length;
        calls.push({ entries, options });
        if (entries > 0) throw new Error('Type Error: a value_info entry onnxruntime disagrees with');
        return { created: true };
      },
    };
    const { value, report } = await withSessionRewrites(factory, () => factory.create(bytes, {}), null, rewritesOn('wasm', 'q4'));
    expect(value).toEqual({ created: true });
    expect(calls.map((c) => c.entries)).toEqual([expect.any(Number), 0]);
    expect(calls[0]!.entries).toBeGreaterThan(0);
    expect(calls[0]!.options['enableMemPattern']).toBe(false);
    expect('enableMemPattern' in calls[1]!.options).toBe(false);
    expect(report.int8Projections).toBeGreaterThan(0);
  });

  it('an error of a graph without named shapes is the load’s, not retried', async () => {
    const bytes = new Uint8Array(readFileSync(fileOf(TINY_RANDOM_LLAMA.name, 'model_q4.onnx')));
    let calls = 0;
    const factory = {
      create: async (..._args: unknown[]) => {
        calls++;
        throw new Error('out of memory');
      },
    };
    // The graph's shapes are named, so the first refusal is retried without them; the second is the load's error.
    await expect(withSessionRewrites(factory, () => factory.create(bytes, {}), null, rewritesOn('wasm', 'q4'))).rejects.toThrow('out of memory');
    expect(calls).toBe(2);
  });

  it('withoutShapes takes out only the value_info entries', () => {
    const { graph } = loaded(TINY_RANDOM_LLAMA.name, 'model.onnx', 'wasm');
    const before = onnxProto.onnx.ModelProto.decode(graph);
    const after = onnxProto.onnx.ModelProto.decode(withoutShapes(graph));
    expect(before.graph!.valueInfo!.length).toBeGreaterThan(0);
    expect(after.graph!.valueInfo).toEqual([]);
    before.graph!.valueInfo = [];
    expect(onnxProto.onnx.ModelProto.encode(after).finish()).toEqual(onnxProto.onnx.ModelProto.encode(before).finish());
  });
});

describe('node attributes as the graph reader parses them', () => {
  it('negative INT and INTS attributes (ten-byte varints), and a TENSOR attribute, read as an independent encoder wrote them', () => {
    const model = onnxProto.onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 17 }],
      graph: {
        name: 'g',
        node: [
          { opType: 'Transpose', input: ['a'], output: ['b'], attribute: [{ name: 'perm', type: 7, ints: [1, 0] }] },
          { opType: 'Gather', input: ['b', 'i'], output: ['c'], attribute: [{ name: 'axis', type: 2, i: -1 }] },
          { opType: 'Constant', input: [], output: ['i'], attribute: [{ name: 'value', type: 4, t: { dataType: 7, dims: [2], rawData: new Uint8Array(BigInt64Array.of(-2n, 0n).buffer) } }] },
          { opType: 'Unsqueeze', input: ['c', 'ax'], output: ['d'], attribute: [{ name: 'axes_hint', type: 7, ints: [-1, -3] }] },
        ],
        input: [{ name: 'a', type: { tensorType: { elemType: 1, shape: { dim: [{ dimParam: 'n' }, { dimValue: 4 }] } } } }],
        output: [{ name: 'd' }],
      },
    });
    const nodes = [...readGraph(onnxProto.onnx.ModelProto.encode(model).finish())!.nodes.values()];
    expect(nodes[0]!.lists.get('perm')).toEqual([1, 0]);
    expect(nodes[1]!.ints.get('axis')).toBe(-1);
    expect(nodes[2]!.tensors.has('value')).toBe(true);
    expect(nodes[3]!.lists.get('axes_hint')).toEqual([-1, -3]);
  });
});
