/**
 * Every hub format the generator writes for tiny-random-llama (fp32, fp16, q4, q4f16, q8) and its
 * GQA sibling tiny-random-llama-gqa (fp32, fp16, q4, q4f16), run by onnxruntime-node's CPU
 * kernels, against
 *   (a) an independent float64 forward pass (reference-llama.ts) of the weights the format
 *       really holds (float16-rounded, or dequantized q4 / q8), and
 *   (b) the fp32 graph (the model.onnx reference),
 * as max |Δ log-softmax| over all tokens and over the reference's top 5, for several prompts,
 * at every prefill position and at one step continued from the returned KV cache.
 *
 * The bounds are the values measured with onnxruntime-node 1.30 (see MEASURED) times MARGIN, so a
 * format that drifts further (a wrong scale, fp16 data read as fp32, a broken cache) fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromFloat16Bits, roundToFloat16, toFloat16Bits } from '../../scripts/models/float16.ts';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { type WeightFormat, isHalfFormat } from '../../scripts/models/linear-formats.ts';
import { modelInputNames, modelOutputNames } from '../../scripts/models/llama-graph.ts';
import { dequantizeQ4, quantizeQ4 } from '../../scripts/models/quantize-q4.ts';
import { dequantize, quantizePerColumn } from '../../scripts/models/quantize.ts';
import { TINY_RANDOM_LLAMA as SPEC, TINY_GQA_MODEL_NAME } from '../../scripts/models/specs.ts';
import { type LayerWeights, type LlamaWeights, generateWeights } from '../../scripts/models/weights.ts';
import { ONNX_FILES, externalDataFile } from '../../scripts/models/write-model.ts';
import { referenceForward } from './reference-llama.ts';

const OPTIMUM_DIR = join(DEFAULT_MODELS_DIR, SPEC.name);
const GQA_DIR = join(DEFAULT_MODELS_DIR, TINY_GQA_MODEL_NAME);
const OPTIMUM_FORMATS: readonly WeightFormat[] = ['fp32', 'fp16', 'q4', 'q4f16', 'q8'];
const GQA_FORMATS: readonly WeightFormat[] = ['fp32', 'fp16', 'q4', 'q4f16'];

interface Drift {
  /** max |Δ log-softmax| over the reference's 5 most likely tokens */
  readonly top5: number;
  /** max |Δ log-softmax| over the whole vocabulary */
  readonly all: number;
}

/**
 * Measured max drift (onnxruntime-node 1.30, 4 prompts × every position + 1 cached step; the
 * larger of the Optimum-style and GQA graphs, rounded up).
 * vsRef: against the float64 reference of the format's own (float16-rounded / dequantized) weights:
 *   exact up to float32 rounding for q4 (MatMulNBits computes (q - 8)·scale in float32), float16
 *   activation rounding for fp16/q4f16, and the uint8 per-tensor activation quantization of
 *   DynamicQuantizeLinear for q8.
 * vsFp32: against model.onnx: adds the weights' own quantization. 4-bit on these random Gaussian
 *   weights moves the top-5 log-probabilities by up to ≈ 3.8 (the model is small and its
 *   attention sharp); q8 (7-bit reduce_range weights, uint8 activations) by ≈ 0.45.
 */
const MEASURED: Record<WeightFormat, { vsRef: Drift; vsFp32: Drift }> = {
  fp32: { vsRef: { top5: 8.7e-6, all: 1.5e-5 }, vsFp32: { top5: 7.6e-6, all: 1.5e-5 } },
  fp16: { vsRef: { top5: 1.1e-2, all: 1.9e-2 }, vsFp32: { top5: 1.8e-2, all: 3.3e-2 } },
  q4: { vsRef: { top5: 6.8e-6, all: 9.3e-6 }, vsFp32: { top5: 3.8, all: 4.6 } },
  q4f16: { vsRef: { top5: 1.5e-2, all: 2.7e-2 }, vsFp32: { top5: 3.8, all: 4.6 } },
  q8: { vsRef: { top5: 0.22, all: 0.43 }, vsFp32: { top5: 0.45, all: 0.68 } },
};
/** Bounds = measured × MARGIN (plus a float32 floor for the exact cases). */
const MARGIN = 2;
const FLOOR = 1e-4;
const bound = (d: number) => Math.max(d * MARGIN, FLOOR);

/** Deterministic prompts of token ids (no tokenizer needed: ids 3..vocab-1 are ordinary tokens). */
const PROMPTS: number[][] = (() => {
  let s = 12345;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s;
  };
  return [5, 8, 11, 16].map((n) => Array.from({ length: n }, () => 3 + (next() % (SPEC.vocabSize - 3))));
})();

/** The weights a format really holds, widened to float32. */
function formatWeights(w: LlamaWeights, format: WeightFormat): LlamaWeights {
  const h = SPEC.hiddenSize;
  const qd = SPEC.numAttentionHeads * SPEC.headDim;
  const kvd = SPEC.numKeyValueHeads * SPEC.headDim;
  const I = SPEC.intermediateSize;
  const half = isHalfFormat(format);
  const other = (a: Float32Array) => (half ? roundToFloat16(a) : a);
  const proj = (a: Float32Array, r: number, c: number): Float32Array => {
    if (format === 'q4' || format === 'q4f16') return dequantizeQ4(quantizeQ4(a, r, c));
    if (format === 'q8') return dequantize(quantizePerColumn(a, r, c));
    return other(a);
  };
  return {
    embed: other(w.embed),
    finalNorm: other(w.finalNorm),
    layers: w.layers.map(
      (l): LayerWeights => ({
        inputNorm: other(l.inputNorm),
        postNorm: other(l.postNorm),
        q: proj(l.q, h, qd),
        k: proj(l.k, h, kvd),
        v: proj(l.v, h, kvd),
        o: proj(l.o, qd, h),
        gate: proj(l.gate, h, I),
        up: proj(l.up, h, I),
        down: proj(l.down, I, h),
      }),
    ),
  };
}

function logSoftmax(row: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < row.length; i++) max = Math.max(max, row[i] as number);
  let z = 0;
  for (let i = 0; i < row.length; i++) z += Math.exp((row[i] as number) - max);
  const lz = max + Math.log(z);
  return Float64Array.from(row as ArrayLike<number>, (v) => v - lz);
}

function drift(got: ArrayLike<number>, want: ArrayLike<number>): Drift {
  const a = logSoftmax(got);
  const b = logSoftmax(want);
  const top = Array.from(b.keys())
    .sort((x, y) => (b[y] as number) - (b[x] as number))
    .slice(0, 5);
  let all = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs((a[i] as number) - (b[i] as number));
    if (!(d <= all)) all = d; // NaN propagates as a failure
  }
  const top5 = Math.max(...top.map((i) => Math.abs((a[i] as number) - (b[i] as number))));
  return { top5, all };
}

const worse = (x: Drift, y: Drift): Drift => ({ top5: Math.max(x.top5, y.top5), all: Math.max(x.all, y.all) });
const ZERO: Drift = { top5: 0, all: 0 };

/** One onnxruntime-node session over a generated file, with float16 handled at the boundary. */
class Runner {
  private constructor(
    private readonly session: ort.InferenceSession,
    readonly format: WeightFormat,
  ) {}

  static async open(dir: string, format: WeightFormat): Promise<Runner> {
    return new Runner(await ort.InferenceSession.create(join(dir, ONNX_FILES[format])), format);
  }

  private kvTensor(data: Float32Array | Uint16Array, dims: readonly number[]): ort.Tensor {
    return isHalfFormat(this.format)
      ? new ort.Tensor('float16', data instanceof Uint16Array ? data : toFloat16Bits(data), dims)
      : new ort.Tensor('float32', data as Float32Array, dims);
  }

  /**
   * Runs `tokens` after a cache of `past` positions (undefined = empty) and returns the logits
   * rows (float32, decoded from float16 where the format has float16 logits) and the present.* cache.
   */
  async run(tokens: readonly number[], past?: Map<string, ort.Tensor>): Promise<{ rows: Float32Array[]; present: Map<string, ort.Tensor> }> {
    const pastLen = past ? ((past.get('past_key_values.0.key') as ort.Tensor).dims[2] as number) : 0;
    const S = tokens.length;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens.map(BigInt)), [1, S]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(pastLen + S).fill(1n), [1, pastLen + S]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: S }, (_, i) => BigInt(pastLen + i)), [1, S]),
    };
    for (const name of modelInputNames(SPEC).filter((n) => n.startsWith('past_key_values.'))) {
      feeds[name] = past?.get(name) ?? this.kvTensor(new Float32Array(0), [1, SPEC.numKeyValueHeads, 0, SPEC.headDim]);
    }
    const out = await this.session.run(feeds);
    try {
      const logits = out['logits'] as ort.Tensor;
      expect(logits.type).toBe(isHalfFormat(this.format) ? 'float16' : 'float32');
      const V = SPEC.vocabSize;
      const flat = logits.type === 'float16' ? fromFloat16Bits(logits.data as Uint16Array) : Float32Array.from(logits.data as Float32Array);
      const rows = Array.from({ length: S }, (_, p) => flat.slice(p * V, (p + 1) * V));
      const present = new Map<string, ort.Tensor>();
      for (const name of modelOutputNames(SPEC).filter((n) => n.startsWith('present.'))) {
        const t = out[name] as ort.Tensor;
        expect(t.dims).toEqual([1, SPEC.numKeyValueHeads, pastLen + S, SPEC.headDim]);
        // copy: the next run owns its inputs, and this run's outputs are disposed below
        present.set(name.replace('present.', 'past_key_values.'), this.kvTensor((t.data as Float32Array | Uint16Array).slice(), t.dims));
      }
      return { rows, present };
    } finally {
      for (const t of Object.values(out)) t.dispose();
    }
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}

function disposeCache(cache: Map<string, ort.Tensor>): void {
  for (const t of cache.values()) t.dispose();
}

let weights: LlamaWeights;
/** fp32 graph rows per prompt: prefill positions then the cached step. */
const fp32Rows = new Map<number, Float32Array[]>();
const measured: string[] = [];

beforeAll(async () => {
  await generateModels({ only: 'tiny' }); // also writes tiny-random-llama-gqa; no-op when current
  weights = generateWeights(SPEC);
  const fp32 = await Runner.open(OPTIMUM_DIR, 'fp32');
  try {
    for (const [i, prompt] of PROMPTS.entries()) fp32Rows.set(i, await promptRows(fp32, prompt));
  } finally {
    await fp32.release();
  }
}, 120_000);

afterAll(() => {
  // the measured numbers, for the report / docs/models.md
  if (measured.length) console.log(`format drift (max |Δ log-softmax|):\n${measured.join('\n')}`);
});

/** Logits rows of `prompt` minus its last token, then of the last token from the returned cache. */
async function promptRows(runner: Runner, prompt: readonly number[]): Promise<Float32Array[]> {
  const head = prompt.slice(0, -1);
  const { rows, present } = await runner.run(head);
  try {
    const step = await runner.run(prompt.slice(-1), present);
    disposeCache(step.present);
    return [...rows, ...step.rows];
  } finally {
    disposeCache(present);
  }
}

describe.each([
  ['Optimum-style', OPTIMUM_DIR, OPTIMUM_FORMATS],
  ['GQA', GQA_DIR, GQA_FORMATS],
] as const)('%s export on onnxruntime-node', (style, dir, formats) => {
  it.each(formats.map((f) => [f]))('%s agrees with the float64 reference of its weights and with fp32', async (format) => {
    const runner = await Runner.open(dir, format);
    try {
      const ref = formatWeights(weights, format);
      let vsRef = ZERO;
      let vsFp32 = ZERO;
      for (const [i, prompt] of PROMPTS.entries()) {
        const rows = await promptRows(runner, prompt);
        const refRows = referenceForward(SPEC, ref, prompt);
        const base = fp32Rows.get(i) as Float32Array[];
        expect(rows).toHaveLength(prompt.length);
        for (let p = 0; p < prompt.length; p++) {
          vsRef = worse(vsRef, drift(rows[p] as Float32Array, refRows[p] as Float64Array));
          vsFp32 = worse(vsFp32, drift(rows[p] as Float32Array, base[p] as Float32Array));
        }
      }
      measured.push(
        `  ${style} ${format}: vs f64 reference top5 ${vsRef.top5.toExponential(2)} all ${vsRef.all.toExponential(2)}; ` +
          `vs fp32 top5 ${vsFp32.top5.toExponential(2)} all ${vsFp32.all.toExponential(2)}`,
      );
      const m = MEASURED[format];
      expect(vsRef.top5).toBeLessThanOrEqual(bound(m.vsRef.top5));
      expect(vsRef.all).toBeLessThanOrEqual(bound(m.vsRef.all));
      expect(vsFp32.top5).toBeLessThanOrEqual(bound(m.vsFp32.top5));
      expect(vsFp32.all).toBeLessThanOrEqual(bound(m.vsFp32.all));
      if (format !== 'fp32') expect(vsFp32.all).toBeGreaterThan(0); // really a different model file
    } finally {
      await runner.release();
    }
  });
});

describe('GQA export equals the Optimum-style export of the same dtype', () => {
  /** max |Δ logit| measured: fp32 1.4e-5, q4 8e-6, fp16 1.8e-2, q4f16 1.6e-2 (float16 op orders differ). */
  const TOL: Record<string, number> = { fp32: 1e-4, q4: 1e-4, fp16: 0.05, q4f16: 0.05 };
  it.each(GQA_FORMATS.map((f) => [f]))('%s', async (format) => {
    const a = await Runner.open(OPTIMUM_DIR, format);
    const b = await Runner.open(GQA_DIR, format);
    try {
      let worst = 0;
      for (const prompt of PROMPTS) {
        const ra = await promptRows(a, prompt);
        const rb = await promptRows(b, prompt);
        for (let p = 0; p < prompt.length; p++) {
          const x = ra[p] as Float32Array;
          const y = rb[p] as Float32Array;
          for (let t = 0; t < x.length; t++) {
            const d = Math.abs((x[t] as number) - (y[t] as number));
            if (!(d <= worst)) worst = d;
          }
        }
      }
      measured.push(`  GQA vs Optimum ${format}: max |Δ logit| ${worst.toExponential(2)}`);
      expect(worst).toBeLessThanOrEqual(TOL[format] as number);
    } finally {
      await a.release();
      await b.release();
    }
  });
});

describe('external data', () => {
  it('model_fp16.onnx keeps its weights in model_fp16.onnx_data, declared in config.json as transformers.js reads it', () => {
    for (const dir of [OPTIMUM_DIR, GQA_DIR]) {
      const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
      expect(config['transformers.js_config']).toEqual({
        kv_cache_dtype: { q4f16: 'float16', fp16: 'float16' },
        use_external_data_format: { 'model_fp16.onnx': 1 },
      });
      expect(externalDataFile('fp16')).toBe('onnx/model_fp16.onnx_data');
      const graph = readFileSync(join(dir, ONNX_FILES.fp16));
      const data = readFileSync(join(dir, 'onnx/model_fp16.onnx_data'));
      // the graph alone is far smaller than its weights, which are in the data file
      expect(graph.length).toBeLessThan(data.length / 4);
      expect(graph.includes(Buffer.from('model_fp16.onnx_data'))).toBe(true);
    }
  });

  it('loads from bytes with externalData, as the browser passes it', async () => {
    const graph = readFileSync(join(OPTIMUM_DIR, ONNX_FILES.fp16));
    const data = readFileSync(join(OPTIMUM_DIR, 'onnx/model_fp16.onnx_data'));
    const fromBytes = await ort.InferenceSession.create(new Uint8Array(graph), {
      externalData: [{ path: 'model_fp16.onnx_data', data: new Uint8Array(data) }],
    });
    await fromBytes.release();
    // without the data the graph cannot load: the weights really are outside it
    await expect(ort.InferenceSession.create(new Uint8Array(graph))).rejects.toThrow();
  });
});

describe('transformers.js loads every dtype as the hub lays it out', () => {
  /**
   * Greedy continuation of one prompt (8 new tokens, KV cache reused by generate()). Measured:
   * fp16 and q8 give fp32's 8 tokens, q4 and q4f16 the first 7 (then 918 for 473). Required here:
   * all 8 for fp16 / q8, the first 4 for the 4-bit formats.
   */
  const AGREE: Record<WeightFormat, number> = { fp32: 8, fp16: 8, q8: 8, q4: 4, q4f16: 4 };
  const greedy = async (name: string, dtype: WeightFormat): Promise<number[]> => {
    const { AutoModelForCausalLM, Tensor, env } = await import('@huggingface/transformers');
    env.localModelPath = `${DEFAULT_MODELS_DIR}/`;
    env.allowLocalModels = true;
    env.allowRemoteModels = false;
    const model = await AutoModelForCausalLM.from_pretrained(name, { dtype, device: 'cpu' });
    const ids = new Tensor('int64', BigInt64Array.from([1n, 50n, 60n, 70n]), [1, 4]);
    const mask = new Tensor('int64', new BigInt64Array(4).fill(1n), [1, 4]);
    try {
      const out = (await model.generate({ input_ids: ids, attention_mask: mask, max_new_tokens: 8, do_sample: false } as never)) as InstanceType<typeof Tensor>;
      const tokens = (out.tolist() as bigint[][])[0]?.slice(4).map(Number) ?? [];
      out.dispose();
      return tokens;
    } finally {
      ids.dispose();
      mask.dispose();
      await model.dispose();
    }
  };

  it.each([
    ...OPTIMUM_FORMATS.map((f) => [SPEC.name, f] as const),
    ...GQA_FORMATS.map((f) => [TINY_GQA_MODEL_NAME, f] as const),
  ])('%s %s: loads (external data included) and its greedy tokens start as fp32\'s', async (name, dtype) => {
    const want = await greedy(SPEC.name, 'fp32');
    const got = await greedy(name, dtype);
    expect(want).toHaveLength(8);
    expect(got).toHaveLength(8);
    expect(got.slice(0, AGREE[dtype])).toEqual(want.slice(0, AGREE[dtype]));
  }, 60_000);
});

describe('quantized values shared across files', () => {
  it('q4 scales are float16 values, and model_q4f16 holds the same nibbles with those scales as float16', async () => {
    const { default: onnxProto } = await import('onnx-proto');
    const inits = (file: string) => {
      const m = onnxProto.onnx.ModelProto.decode(readFileSync(join(OPTIMUM_DIR, file)));
      return new Map((m.graph?.initializer ?? []).map((t) => [t.name as string, t]));
    };
    const q4 = inits(ONNX_FILES.q4);
    const q4f16 = inits(ONNX_FILES.q4f16);
    let scales = 0;
    for (const [name, t] of q4) {
      if (!name.endsWith('.q4') && !name.endsWith('.scales')) continue;
      const twin = q4f16.get(name);
      expect(twin, name).toBeDefined();
      const raw = t.rawData as Uint8Array;
      if (name.endsWith('.q4')) expect(Buffer.from(twin?.rawData as Uint8Array).equals(Buffer.from(raw))).toBe(true);
      if (!name.endsWith('.scales')) continue;
      const f32 = new Float32Array(new Uint8Array(raw).buffer);
      const bits = new Uint16Array(new Uint8Array(twin?.rawData as Uint8Array).buffer);
      expect(twin?.dataType).toBe(10); // FLOAT16
      expect(Array.from(fromFloat16Bits(bits))).toEqual(Array.from(f32)); // exact: every scale is a float16 value
      scales += f32.length;
    }
    const per = (k: number, n: number) => (k / 32) * n;
    const h = SPEC.hiddenSize;
    const qd = SPEC.numAttentionHeads * SPEC.headDim;
    const kvd = SPEC.numKeyValueHeads * SPEC.headDim;
    const I = SPEC.intermediateSize;
    expect(scales).toBe(SPEC.numHiddenLayers * (per(h, qd) + 2 * per(h, kvd) + per(qd, h) + 2 * per(h, I) + per(I, h)));
  });
});
