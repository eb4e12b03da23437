/**
 * 4-bit projections as 8-bit integer products (src/engine/graph/int8-projections.ts), run in
 * onnxruntime-web (the bundle the app ships, wasm, in Node):
 *
 * - `requantize` against an independent dequantization (scripts/models/quantize-q4.ts, and a
 *   hand-written one for zero points): each column's scale is max |W| / 127 and each weight
 *   round(W / scale), exactly;
 * - the rewritten graph of one MatMulNBits (zero points, a bias, K not a multiple of the block)
 *   against the same product computed here from its definition, at operator sets 17 (ReduceMax's
 *   axes an attribute) and 18 (an input); a row's product does not depend on the rows beside it;
 * - every generated q4 export (and tiny-random-llama's q4f16), rewritten by `withSessionRewrites`
 *   as a wasm load does: every MatMulNBits is rewritten, and the logits stay within a quarter of
 *   what 4 bits already move them from float32 (measured: 9 % on tiny-random-llama's q4); q4f16
 *   stays near q4, both rewritten (the same values, float16 scales).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateModels } from '../../scripts/models/generate-models.ts';
import { DataType, GraphBuilder, bytesOf } from '../../scripts/models/onnx-graph.ts';
import { dequantizeQ4, quantizeQ4 } from '../../scripts/models/quantize-q4.ts';
import { float16ToNumber } from '../../src/engine/runtime/float16.ts';
import { externalizeWeights } from '../../src/engine/graph/externalize-weights.ts';
import { INT8_WEIGHTS, int8Projections, requantize } from '../../src/engine/graph/int8-projections.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { withSessionRewrites } from '../../src/engine/load/session-rewrites.ts';
import { loadOrtWeb, type OrtWeb, promptLogits, promptLogitsData } from '../support/ort-web.ts';
import { GENERATED, TINY } from '../support/models.ts';

let ort: OrtWeb;

beforeAll(async () => {
  await generateModels({ only: 'tiny,families' }); // no-op when the stamps are current
  ort = await loadOrtWeb();
});

const LEVELS = 127;

/** Independent: the column scales and int8 values of a dequantized W [K, N]. */
function expectedInt8(w: Float32Array | Float64Array, k: number, n: number): { w8: number[]; c: number[] } {
  const c = Array.from({ length: n }, (_, col) => {
    let m = 0;
    for (let row = 0; row < k; row++) m = Math.max(m, Math.abs(w[row * n + col]!));
    return m > 0 ? Math.fround(m / LEVELS) : 1;
  });
  return { c, w8: Array.from(w, (v, i) => Math.round(v / c[i % n]!) + 0) }; // + 0: -0 is the int8 0
}

/** A 4-bit matrix with zero points: random nibbles, zero points and scales; and W dequantized by hand. */
function asymmetric(k: number, n: number, blockSize: number, seed: number) {
  const random = seededRandom(seed);
  const blocks = Math.ceil(k / blockSize);
  const q = new Uint8Array(n * blocks * (blockSize / 2));
  for (let i = 0; i < q.length; i++) q[i] = Math.floor(random() * 256);
  const zeroPoints = new Uint8Array(n * Math.ceil(blocks / 2));
  for (let i = 0; i < zeroPoints.length; i++) zeroPoints[i] = Math.floor(random() * 256);
  const scales = Float32Array.from({ length: n * blocks }, () => 0.001 + random() * 0.05);
  // In double precision: (nibble - z) · scale exactly, as requantize computes it.
  const w = new Float64Array(k * n);
  for (let col = 0; col < n; col++) {
    for (let row = 0; row < k; row++) {
      const b = Math.floor(row / blockSize);
      const r = row % blockSize;
      const byte = q[(col * blocks + b) * (blockSize / 2) + Math.floor(r / 2)]!;
      const nibble = r % 2 === 1 ? byte >> 4 : byte & 15;
      const zByte = zeroPoints[col * Math.ceil(blocks / 2) + Math.floor(b / 2)]!;
      const z = b % 2 === 1 ? zByte >> 4 : zByte & 15;
      w[row * n + col] = (nibble - z) * scales[col * blocks + b]!;
    }
  }
  return { q, zeroPoints, scales, w, blocks };
}

describe('requantize', () => {
  it('symmetric 4-bit (the generator’s q4): each column scaled to max |W| / 127, each weight rounded', () => {
    const [k, n] = [96, 40];
    const random = seededRandom(3);
    const m = quantizeQ4(Float32Array.from({ length: k * n }, () => random() - 0.5), k, n);
    const w8 = new Int8Array(k * n);
    const c = new Float32Array(n);
    requantize({ k, n, blockSize: 32, q: m.packed, scales: m.scales, zeroPoints: null }, w8, c);
    const expected = expectedInt8(dequantizeQ4(m), k, n);
    expect(Array.from(c)).toEqual(expected.c);
    expect(Array.from(w8)).toEqual(expected.w8);
    // Every column uses the whole range.
    for (let col = 0; col < n; col++) expect(Math.max(...Array.from({ length: k }, (_, row) => Math.abs(w8[row * n + col]!)))).toBe(LEVELS);
  });

  it('zero points and a last block shorter than the others', () => {
    const [k, n, blockSize] = [80, 24, 32];
    const a = asymmetric(k, n, blockSize, 5);
    const w8 = new Int8Array(k * n);
    const c = new Float32Array(n);
    requantize({ k, n, blockSize, q: a.q, scales: a.scales, zeroPoints: a.zeroPoints }, w8, c);
    const expected = expectedInt8(a.w, k, n);
    expect(Array.from(c)).toEqual(expected.c);
    expect(Array.from(w8)).toEqual(expected.w8);
  });
});

/** A graph of one MatMulNBits y = x · W + bias, x [rows, K]. */
function nbitsGraph(k: number, n: number, blockSize: number, a: ReturnType<typeof asymmetric>, bias: Float32Array, opset: number, scalesAsInput = false): Uint8Array {
  const g = new GraphBuilder('nbits');
  const x = g.input('x', DataType.FLOAT, ['rows', k]);
  // As IR < 4 wrote every initializer: listed among the inputs too (a value the caller may override).
  if (scalesAsInput) (g as unknown as { inputs: object[] }).inputs.push({ name: 'w.scales', elemType: DataType.FLOAT, shape: [n * a.blocks] });
  g.initializer('w.q4', DataType.UINT8, [n, a.blocks, blockSize / 2], a.q);
  g.floatInit('w.scales', [n * a.blocks], a.scales);
  g.initializer('w.zero_points', DataType.UINT8, [a.zeroPoints.length], a.zeroPoints);
  g.floatInit('w.bias', [n], bias);
  const [y] = g.node('MatMulNBits', [x, 'w.q4', 'w.scales', 'w.zero_points', '', 'w.bias'], {
    name: 'proj/MatMulNBits',
    domain: 'com.microsoft',
    attrs: { K: k, N: n, bits: 4, block_size: blockSize },
  });
  g.output(y!, DataType.FLOAT, ['rows', n]);
  return g.toModelProto({ irVersion: 8, opset, producerName: 'test', producerVersion: '1', extraOpsets: [{ domain: 'com.microsoft', version: 1 }] }).toBytes();
}

async function run(graph: Uint8Array, weights: Uint8Array | null, x: Float32Array, rows: number, k: number): Promise<Float32Array> {
  const session = await ort.InferenceSession.create(graph, weights ? { externalData: [{ path: INT8_WEIGHTS, data: weights }] } : {});
  try {
    const out = await session.run({ x: new ort.Tensor('float32', x, [rows, k]) });
    const y = Object.values(out)[0]!;
    const data = Float32Array.from(y.data as Float32Array);
    y.dispose();
    return data;
  } finally {
    await session.release();
  }
}

describe('a rewritten MatMulNBits', () => {
  const [k, n, blockSize, rows] = [80, 24, 32, 3];
  const a = asymmetric(k, n, blockSize, 9);
  const random = seededRandom(11);
  const bias = Float32Array.from({ length: n }, () => random() - 0.5);
  // Rows of different magnitudes, one all zero.
  const x = Float32Array.from({ length: rows * k }, (_, i) => (i >= 2 * k ? 0 : (random() - 0.5) * (i < k ? 1 : 40)));

  for (const opset of [17, 18]) {
    it(`computes round(x / r) · W8 · c · r + bias, row by row (opset ${opset})`, async () => {
      const rewrite = int8Projections(nbitsGraph(k, n, blockSize, a, bias, opset), () => null)!;
      expect(rewrite.projections).toBe(1);
      const y = await run(rewrite.graph, rewrite.weights, x, rows, k);
      // Independent: the definition, with the int8 weights of `expectedInt8`.
      const { w8, c } = expectedInt8(a.w, k, n);
      for (let row = 0; row < rows; row++) {
        const xs = x.subarray(row * k, (row + 1) * k);
        const r = Math.max(Math.fround(Math.fround(Math.max(...Array.from(xs, Math.abs))) * Math.fround(1 / LEVELS)), Math.fround(1e-30));
        const x8 = Array.from(xs, (v) => Math.round(Math.fround(v / r)));
        for (let col = 0; col < n; col++) {
          let acc = 0;
          for (let i = 0; i < k; i++) acc += x8[i]! * w8[i * n + col]!;
          const expected = acc * c[col]! * r + bias[col]!;
          expect(Math.abs(y[row * n + col]! - expected)).toBeLessThanOrEqual(1e-6 * (Math.abs(expected) + 1));
        }
      }
      // The zero row gives the bias.
      expect(Array.from(y.subarray(2 * n))).toEqual(Array.from(bias));
      // Each row alone: the same numbers, bit for bit.
      for (let row = 0; row < rows; row++) {
        const alone = await run(rewrite.graph, rewrite.weights, x.slice(row * k, (row + 1) * k), 1, k);
        expect(Array.from(alone)).toEqual(Array.from(y.subarray(row * n, (row + 1) * n)));
      }
      // And near what MatMulNBits itself computes.
      const native = await run(nbitsGraph(k, n, blockSize, a, bias, opset), null, x, rows, k);
      for (let row = 0; row < 2; row++) {
        const scale = Math.max(...Array.from(native.subarray(row * n, (row + 1) * n), Math.abs));
        for (let col = 0; col < n; col++) expect(Math.abs(y[row * n + col]! - native[row * n + col]!)).toBeLessThan(0.02 * scale);
      }
    });
  }

  it('keeps an initializer the graph also lists as an input', async () => {
    const graph = nbitsGraph(k, n, blockSize, a, bias, 17, true);
    const rewrite = int8Projections(graph, () => null)!;
    // Still declared and still there: the session is created and runs without it being fed.
    const kept = Buffer.from(rewrite.graph).toString('latin1');
    expect(kept.split('w.scales').length - 1).toBe(2);
    expect(kept).not.toContain('w.q4');
    const y = await run(rewrite.graph, rewrite.weights, x, rows, k);
    const plain = int8Projections(nbitsGraph(k, n, blockSize, a, bias, 17), () => null)!;
    expect(Array.from(y)).toEqual(Array.from(await run(plain.graph, plain.weights, x, rows, k)));
  });

  it('leaves a graph without MatMulNBits alone', () => {
    const g = new GraphBuilder('plain');
    const x = g.input('x', DataType.FLOAT, [1, 4]);
    g.floatInit('w', [4, 2], new Float32Array(8));
    g.output(g.op('MatMul', [x, 'w'], 'mm'), DataType.FLOAT, [1, 2]);
    expect(int8Projections(g.toModelProto({ irVersion: 8, opset: 17, producerName: 't', producerVersion: '1' }).toBytes(), () => null)).toBeNull();
  });
});

describe('a q4 export whose weights are external data (the hub layout of larger models)', () => {
  it('reads the 4-bit weights from the mounted file and computes what the single-file export does', async () => {
    const dir = join(GENERATED, TINY);
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
    const kv = { kvHeads: config['num_key_value_heads']!, headDim: config['hidden_size']! / config['num_attention_heads']! };
    const file = () => new Uint8Array(readFileSync(join(dir, 'onnx', 'model_q4.onnx')));
    const factory = ort.InferenceSession;
    // model_q4.onnx + model_q4.onnx_data: the graph names the data file; the data is the original file's bytes.
    const data = file();
    const graph = externalizeWeights(data, 'model_q4.onnx_data')!.graph;
    const external = await withSessionRewrites(factory, () => factory.create(graph, { externalData: [{ path: 'model_q4.onnx_data', data }] }), null, { int8Projections: true });
    const inline = await withSessionRewrites(factory, () => factory.create(file(), {}), null, { int8Projections: true });
    expect(external.report.int8Projections).toBe(14);
    expect(external.report.sessions).toBe(0); // already external: not externalized again
    const ids = [1, 17, 42, 7, 99];
    expect(await promptLogits(ort, external.value, ids, kv, false)).toEqual(await promptLogits(ort, inline.value, ids, kv, false));
    await external.value.release();
    await inline.value.release();
  });
});

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];

/** Logits as numbers, float16 bits decoded (typed arrays and loops: 5 rows of a 151k-262k vocabulary). */
const numbers = (values: Float32Array | Uint16Array, half: boolean): ArrayLike<number> => {
  if (!half) return values;
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = float16ToNumber(values[i]!);
  return out;
};
/** A model file's bytes, read once (a Uint8Array over the Buffer's own memory, not a copy of it). */
const readBytes = (path: string) => {
  const b = readFileSync(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
};

describe('every generated q4 export, rewritten as a wasm load does', () => {
  const cases: [string, string][] = [[TINY, 'model_q4f16.onnx'], ...[TINY, `${TINY}-gqa`, ...FAMILIES].map((m): [string, string] => [m, 'model_q4.onnx'])];
  for (const [model, q4File] of cases) {
    it(`${model} ${q4File}`, async () => {
      const dir = join(GENERATED, model);
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
      const kv = { kvHeads: config['num_key_value_heads'] ?? config['num_attention_heads']!, headDim: config['head_dim'] ?? config['hidden_size']! / config['num_attention_heads']! };
      const file = (name: string) => readBytes(join(dir, 'onnx', name));
      const half = q4File.includes('f16');
      const q4 = file(q4File);
      // NodeProto.op_type (field 4, length 11) "MatMulNBits", as encoded: one a node (counted as
      // String.split counts them in the latin1 text, without making that text).
      const marker = Buffer.from('\x22\x0bMatMulNBits', 'latin1');
      const text = Buffer.from(q4.buffer, q4.byteOffset, q4.byteLength);
      let nodes = 0;
      for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + marker.length)) nodes++;
      const factory = ort.InferenceSession;
      const { value: session, report } = await withSessionRewrites(factory, () => factory.create(q4, {}), null, { int8Projections: true });
      const ids = [1, 17, 42, 7, 99];
      const reference = async (name: string) => {
        const s = await factory.create(file(name));
        const logits = numbers(await promptLogitsData(ort, s, ids, kv, name.includes('f16')), name.includes('f16'));
        await s.release();
        return logits;
      };
      const float = await reference('model.onnx');
      const native = await reference(q4File);
      const rewritten = numbers(await promptLogitsData(ort, session, ids, kv, half), half);
      await session.release();
      expect(report.int8Projections).toBeGreaterThan(0);
      expect(report.int8Projections).toBe(nodes);
      const distance = (p: ArrayLike<number>, q: ArrayLike<number>) => {
        let m = 0;
        for (let i = 0; i < p.length; i++) m = Math.max(m, Math.abs(p[i]! - q[i]!));
        return m;
      };
      expect(distance(rewritten, native)).toBeLessThan(0.25 * distance(native, float));
      if (half) {
        // q4f16 holds q4's values with float16 scales: rewritten, the two stay within float16's rounding.
        const { value: twin } = await withSessionRewrites(factory, () => factory.create(file('model_q4.onnx'), {}), null, { int8Projections: true });
        const q4Logits = await promptLogitsData(ort, twin, ids, kv, false);
        await twin.release();
        expect(distance(rewritten, q4Logits)).toBeLessThan(0.05 * distance(native, float));
      }
    });
  }
});
