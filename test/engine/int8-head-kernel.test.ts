/**
 * The lm_head (and tied embedding) in the engine's own WebAssembly kernel
 * (src/engine/runtime/int8-head-kernel.ts, src/engine/graph/kernel-head.ts):
 *
 * - the committed module is what its text assembles to (scripts/kernels/build.ts);
 * - the kernel against a definition computed here, in integers and float32 written out step by
 *   step: every row of the hidden state rounded half to even to 255 levels, the exact integer
 *   product, then · s[v] · r; embedding rows q · s; vocabularies not a multiple of 4 and hidden
 *   sizes not a multiple of 16;
 * - `kernelHead` on a small tied and untied graph, and on every generated export rewritten by
 *   `withSessionRewrites` as a wasm load does: the graph's hidden state through the kernel gives
 *   the very logits (bit for bit) that the same load gives with the lm_head as onnxruntime's
 *   MatMulInteger (int8-head.ts), at every position; the float matrix is gone; float16 graphs and
 *   forms it does not take are left to int8-head.ts.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { assemble, KERNELS, moduleText } from '../../scripts/kernels/build.ts';
import { generateModels } from '../../scripts/models/generate-models.ts';
import { int8Head } from '../../src/engine/graph/int8-head.ts';
import { kernelHead } from '../../src/engine/graph/kernel-head.ts';
import { withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { Int8HeadKernel } from '../../src/engine/runtime/int8-head-kernel.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { headGraph } from '../support/head-graph.ts';
import { EXPORT_CASES, generatedExport } from '../support/generated-exports.ts';
import { loadOrtWeb, type OrtSession, type OrtWeb } from '../support/ort-web.ts';

let ort: OrtWeb;

beforeAll(async () => {
  await generateModels({ only: 'tiny,families' }); // no-op when the stamps are current
  ort = await loadOrtWeb();
});

describe('the kernel module', () => {
  it('is what its text assembles to', async () => {
    for (const kernel of KERNELS) expect(readFileSync(kernel.module, 'utf8')).toBe(moduleText(kernel, await assemble(kernel.wat)));
  });
  it('runs here (WebAssembly SIMD)', () => {
    expect(Int8HeadKernel.available()).toBe(true);
  });
});

/** Round half to even, written out: the integer below, and the even neighbour on an exact half. */
function halfEven(x: number): number {
  const below = Math.floor(x);
  const rest = x - below;
  if (rest < 0.5) return below;
  if (rest > 0.5) return below + 1;
  return below % 2 === 0 ? below : below + 1;
}

/** The definition, per row: r = max(fl(max|x| · fl(1/127)), fl(1e-30)); x8 = halfEven(fl(x / r)); logit = fl(fl(Σ x8·q) · s) · r. */
function definition(hidden: Float32Array, rows: number, h: number, q: Int8Array, hp: number, s: Float32Array, v: number): Float32Array {
  const out = new Float32Array(rows * v);
  for (let row = 0; row < rows; row++) {
    let most = 0;
    for (let k = 0; k < h; k++) most = Math.max(most, Math.abs(hidden[row * h + k]!));
    const r = Math.max(Math.fround(most * Math.fround(1 / 127)), Math.fround(1e-30));
    const x8 = Array.from({ length: h }, (_, k) => halfEven(Math.fround(hidden[row * h + k]! / r)));
    for (let j = 0; j < v; j++) {
      let acc = 0;
      for (let k = 0; k < h; k++) acc += x8[k]! * q[j * hp + k]!;
      out[row * v + j] = Math.fround(Math.fround(acc * s[j]!) * r);
    }
  }
  return out;
}

function filledKernel(v: number, h: number, seed: number): Int8HeadKernel {
  const kernel = Int8HeadKernel.create(v, h)!;
  const random = seededRandom(seed);
  for (let j = 0; j < v; j++) {
    for (let k = 0; k < h; k++) kernel.q[j * kernel.hp + k] = Math.round((random() * 2 - 1) * 127);
    kernel.q[j * kernel.hp] = j % 2 ? 127 : -127; // the extremes of the range
    kernel.s[j] = Math.fround(0.001 + random() * 0.05);
  }
  return kernel;
}

describe('the kernel, against the definition', () => {
  for (const [v, h] of [
    [37, 24],
    [1, 16],
    [6, 7],
    [1003, 576],
  ] as const) {
    it(`V = ${v}, H = ${h}: logits of several rows bit for bit, and the embedding rows`, () => {
      const kernel = filledKernel(v, h, v * 1000 + h);
      expect(kernel.hp % 16).toBe(0);
      expect(kernel.hp).toBeGreaterThanOrEqual(h);
      const random = seededRandom(h);
      const rows = 3;
      const hidden = Float32Array.from({ length: rows * h }, (_, i) => (random() - 0.5) * (1 + (Math.floor(i / h) % 3) * 40));
      // Values that land on exact halves once divided by their row's scale (r = 1 where max |x| = 127).
      hidden.fill(0, 0, h);
      hidden[0] = 127;
      for (let k = 1; k < h; k++) hidden[k] = ((k % 6) - 3) + 0.5;
      // A row of zeros (r = 1e-30).
      const withZeros = Float32Array.from([...hidden, ...new Float32Array(h)]);
      const got = kernel.logits(withZeros, rows + 1);
      const expected = definition(withZeros, rows + 1, h, kernel.q, kernel.hp, kernel.s, v);
      expect(Array.from(got)).toEqual(Array.from(expected));
      // The first row's scale is exactly 1, so its halves stay halves, some of which half-even rounds down where Math.round goes up.
      expect(Math.max(Math.fround(127 * Math.fround(1 / 127)), 0)).toBe(1);
      if (h > 6) expect(Array.from(hidden.subarray(1, h)).some((x) => halfEven(x) !== Math.round(x))).toBe(true);

      const ids = [0, v - 1, Math.floor(v / 2), 0];
      const embedded = kernel.embed(ids);
      for (let i = 0; i < ids.length; i++) for (let k = 0; k < h; k++) expect(embedded[i * h + k]).toBe(Math.fround(kernel.q[ids[i]! * kernel.hp + k]! * kernel.s[ids[i]!]!));
    });
  }

  it('refuses an id outside the vocabulary and a hidden state of the wrong width', () => {
    const kernel = filledKernel(10, 16, 1);
    expect(() => kernel.embed([10])).toThrow(/outside the vocabulary/);
    expect(() => kernel.embed([-1])).toThrow(/outside the vocabulary/);
    expect(() => kernel.logits(new Float32Array(15), 1)).toThrow(/not 1 rows of 16/);
  });
});

// ---- The rewrite ----

function randomMatrix(v: number, h: number, seed: number): Float32Array {
  const random = seededRandom(seed);
  return Float32Array.from({ length: v * h }, (_, i) => (Math.floor(i / h) === 3 ? 0 : (random() - 0.5) * (1 + (Math.floor(i / h) % 5) * 3)));
}
const transposed = (m: Float32Array, v: number, h: number) => Float32Array.from({ length: v * h }, (_, i) => m[(i % v) * h + Math.floor(i / v)]!);

let made: Int8HeadKernel | null = null;
const into = (v: number, h: number) => (made = Int8HeadKernel.create(v, h));

async function outputsOf(graph: Uint8Array, feeds: Record<string, unknown>, mount: { path: string; data: Uint8Array } | null): Promise<{ names: readonly string[]; inputNames: readonly string[]; out: Record<string, Float32Array> }> {
  const session = (await ort.InferenceSession.create(graph, mount ? { externalData: [mount] } : {})) as OrtSession & { outputNames: readonly string[] };
  try {
    const run = await session.run(Object.fromEntries(Object.entries(feeds).filter(([name]) => session.inputNames.includes(name))));
    const out = Object.fromEntries(Object.entries(run).map(([name, t]) => [name, Float32Array.from(t.data as Float32Array)]));
    for (const t of Object.values(run)) t.dispose();
    return { names: session.outputNames, inputNames: session.inputNames, out };
  } finally {
    await session.release();
  }
}

describe('kernelHead on a small graph', () => {
  const [v, h] = [50, 16];
  const e = randomMatrix(v, h, 7);
  const ids = [5, 3, 49, 0, 5];
  const idsTensor = () => new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);

  it('tied: the embedding and the head leave the graph; the kernel gives MatMulInteger\'s logits bit for bit', async () => {
    const graph = headGraph(e, v, h, { opset: 17 });
    const viaOrt = int8Head(graph, () => null)!;
    const reference = await outputsOf(viaOrt.graph, { input_ids: idsTensor() }, { path: 'jev-int8-head', data: viaOrt.weights });
    const rewrite = kernelHead(graph, () => null, into)!;
    const kernel = made!;
    expect(rewrite).toMatchObject({ hidden: 'lm_head/Flatten/output_0', embeds: 'embedded', v, h, droppedBytes: v * h * 4, int8Bytes: v * h + v * 4 });
    const text = Buffer.from(rewrite.graph).toString('latin1');
    expect(text).not.toContain('embed.weight');
    expect(text).not.toContain('Gemm');
    const run = await outputsOf(rewrite.graph, { input_ids: idsTensor(), embedded: new ort.Tensor('float32', kernel.embed(ids), [1, ids.length, h]) }, null);
    expect(run.inputNames).toContain('embedded');
    expect(run.names).not.toContain('logits');
    expect(Array.from(kernel.embed(ids))).toEqual(Array.from(reference.out['embedded']!));
    expect(Array.from(kernel.logits(run.out[rewrite.hidden]!, ids.length))).toEqual(Array.from(reference.out['logits']!));
  });

  it('untied: the head leaves the graph, the embedding stays for int8-head.ts', async () => {
    const w = randomMatrix(v, h, 8);
    const graph = headGraph(e, v, h, { opset: 17, untied: transposed(w, v, h) });
    const viaOrt = int8Head(graph, () => null)!;
    const reference = await outputsOf(viaOrt.graph, { input_ids: idsTensor() }, { path: 'jev-int8-head', data: viaOrt.weights });
    const rewrite = kernelHead(graph, () => null, into)!;
    const kernel = made!;
    expect(rewrite).toMatchObject({ embeds: null, droppedBytes: v * h * 4 });
    const rest = int8Head(rewrite.graph, () => null)!;
    expect(rest).toMatchObject({ embedding: true, head: false });
    const run = await outputsOf(rest.graph, { input_ids: idsTensor() }, { path: 'jev-int8-head', data: rest.weights });
    expect(Array.from(run.out['embedded']!)).toEqual(Array.from(reference.out['embedded']!));
    expect(Array.from(kernel.logits(run.out[rewrite.hidden]!, ids.length))).toEqual(Array.from(reference.out['logits']!));
  });

  it('leaves what it does not take: a Gemm with alpha; no kernel to write into', () => {
    expect(kernelHead(headGraph(e, v, h, { opset: 17, alpha: true }), () => null, into)).toBeNull();
    expect(kernelHead(headGraph(e, v, h, { opset: 17 }), () => null, () => null)).toBeNull();
  });

  it('keeps the matrix where a third node reads it', () => {
    const rewrite = kernelHead(headGraph(e, v, h, { opset: 17, thirdReader: true }), () => null, into)!;
    expect(rewrite).toMatchObject({ embeds: 'embedded', droppedBytes: 0 });
    expect(Buffer.from(rewrite.graph).toString('latin1')).toContain('embed.weight');
  });
});

// ---- Every generated export ----

const PROMPT = [1, 300, 5, 250, 12, 8, 77];

describe('every generated export: the kernel against MatMulInteger, in the same load', () => {
  for (const [model, format] of EXPORT_CASES) {
    it(`${model} ${format}`, async () => {
      const { kv, v, h, half, tied, graph, options } = generatedExport(model, format);
      const factory = ort.InferenceSession;
      const load = (kernel: boolean) => withSessionRewrites(factory, () => factory.create(graph(), options()), null, { int8Projections: true, int8Head: true, kernelHead: kernel });
      const viaOrt = await load(false);
      const viaKernel = await load(true);
      try {
        expect(viaOrt.report.kernelHead).toBeNull();
        if (half) {
          // A float16 head is left to int8-head.ts.
          expect(viaKernel.report.kernelHead).toBeNull();
          expect(viaKernel.report.int8Head).toEqual(viaOrt.report.int8Head);
          return;
        }
        const head = viaKernel.report.kernelHead!;
        expect(head).not.toBeNull();
        expect(head.embeds !== null).toBe(tied);
        // The same bytes left the graph, and the same int8 bytes replaced them.
        expect(viaKernel.report.int8Head).toEqual({ ...viaOrt.report.int8Head, engineKernel: true });
        expect(viaKernel.value.inputNames.includes(head.embeds ?? 'input_ids')).toBe(true);

        const ints = (f: (i: number) => number) => new ort.Tensor('int64', BigInt64Array.from(PROMPT.map((_, i) => BigInt(f(i)))), [1, PROMPT.length]);
        const feeds = (session: OrtSession) => {
          const f: Record<string, unknown> = {};
          for (const name of session.inputNames) {
            if (name === 'input_ids') f[name] = ints((i) => PROMPT[i]!);
            else if (name === 'attention_mask') f[name] = ints(() => 1);
            else if (name === 'position_ids') f[name] = ints((i) => i);
            else if (name === 'num_logits_to_keep') f[name] = new ort.Tensor('int64', BigInt64Array.from([0n]), []);
            else if (name === head.embeds) f[name] = new ort.Tensor('float32', head.kernel.embed(PROMPT), [1, PROMPT.length, h]);
            else f[name] = new ort.Tensor('float32', new Float32Array(0), [1, kv.kvHeads, 0, kv.headDim]);
          }
          return f;
        };
        const a = await viaOrt.value.run(feeds(viaOrt.value));
        const b = await viaKernel.value.run(feeds(viaKernel.value));
        try {
          expect(Object.keys(b)).not.toContain('logits');
          const logits = head.kernel.logits(b[head.hidden]!.data as Float32Array, PROMPT.length);
          expect(logits.length).toBe(PROMPT.length * v);
          const reference = a['logits']!.data as Float32Array;
          let differ = 0;
          for (let i = 0; i < logits.length; i++) if (!Object.is(logits[i], reference[i])) differ++;
          expect(differ, `${differ} of ${logits.length} logits differ from MatMulInteger's`).toBe(0);
          // The caches agree too: nothing else in the graph changed.
          for (const name of Object.keys(a)) if (name.startsWith('present')) expect(Array.from(b[name]!.data as Float32Array)).toEqual(Array.from(a[name]!.data as Float32Array));
        } finally {
          for (const t of [...Object.values(a), ...Object.values(b)]) t.dispose();
        }
      } finally {
        await viaOrt.value.release();
        await viaKernel.value.release();
      }
    });
  }
});
