/**
 * The generated tiny-random-llama model, loaded by transformers.js (onnxruntime-node, CPU),
 * against an independent float64 reference forward pass over the same seeded weights.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AutoModelForCausalLM,
  AutoTokenizer,
  DynamicCache,
  type PreTrainedModel,
  type PreTrainedTokenizer,
  Tensor,
  env,
} from '@huggingface/transformers';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { CHAT_TEMPLATE } from '../../scripts/models/hf-files.ts';
import { modelInputNames, modelOutputNames } from '../../scripts/models/llama-graph.ts';
import { dequantize, quantizePerColumn } from '../../scripts/models/quantize.ts';
import { SMOLLM2_135M_RANDOM as SMOL, TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { type LayerWeights, type LlamaWeights, generateWeights } from '../../scripts/models/weights.ts';
import { STAMP_FILE, readStamp } from '../../scripts/models/write-model.ts';
import { referenceForward } from './reference-llama.ts';

const MODEL_DIR = join(DEFAULT_MODELS_DIR, SPEC.name);
const TOL = 1e-4;
/**
 * Bound on max |q8 - fp32| over all logits of PROMPT (logit std ≈ 2.5). The q8 file is
 * quantize_dynamic style (7-bit int8 weights, uint8 per-tensor activations by
 * DynamicQuantizeLinear); measured with onnxruntime-node 1.30: 0.90. Bound = measured × 1.5.
 */
const Q8_VS_FP32_TOL = 1.4;

type Outputs = Record<string, Tensor>;

/** Every tensor the tests create or receive goes through `own` and is disposed in afterEach-style blocks. */
const owned = new Set<Tensor>();
function own<T extends Tensor>(t: T): T {
  owned.add(t);
  return t;
}
function ownAll(out: Outputs): Outputs {
  for (const t of Object.values(out)) own(t);
  return out;
}
function disposeOwned(): void {
  for (const t of owned) t.dispose();
  owned.clear();
}

const i64 = (rows: number[][]): Tensor =>
  own(new Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, (rows[0] as number[]).length]));

/** Row `pos` of batch item `b` of a [B, S, V] logits tensor. */
function logitsRow(logits: Tensor, b: number, pos: number): Float32Array {
  const [, S, V] = logits.dims as [number, number, number];
  return (logits.data as Float32Array).subarray((b * S + pos) * V, (b * S + pos + 1) * V);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

function stats(row: ArrayLike<number>) {
  let mean = 0;
  for (let i = 0; i < row.length; i++) mean += row[i] as number;
  mean /= row.length;
  let v = 0;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < row.length; i++) {
    const x = row[i] as number;
    v += (x - mean) ** 2;
    if (x > max) (max = x), (argmax = i);
  }
  const probs = Array.from(row, (x) => Math.exp(x - max));
  const z = probs.reduce((a, b) => a + b, 0);
  return { std: Math.sqrt(v / row.length), argmax, pmax: 1 / z, probs: probs.map((p) => p / z) };
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

let tokenizer: PreTrainedTokenizer;
let model: PreTrainedModel;
let q8Model: PreTrainedModel;
let weights: LlamaWeights;

/** A forward pass through transformers.js' own model(...) path (it computes position_ids itself). */
async function forward(inputs: Record<string, unknown>, m: PreTrainedModel = model): Promise<Outputs> {
  return ownAll((await m(inputs)) as Outputs);
}

/** The present.* outputs as a cache for the next step. */
function cacheFrom(out: Outputs): DynamicCache {
  const entries: Record<string, Tensor> = {};
  for (const [name, t] of Object.entries(out)) {
    if (name.startsWith('present.')) entries[name.replace('present.', 'past_key_values.')] = t;
  }
  return new DynamicCache(entries);
}

const PROMPT = 'The quick brown fox jumps over the lazy dog. Is the answer true or false?';

beforeAll(async () => {
  await generateModels({ only: 'tiny' }); // no-op when the stamp is current
  env.localModelPath = `${DEFAULT_MODELS_DIR}/`;
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
  tokenizer = await AutoTokenizer.from_pretrained(SPEC.name);
  model = await AutoModelForCausalLM.from_pretrained(SPEC.name, { dtype: 'fp32', device: 'cpu' });
  q8Model = await AutoModelForCausalLM.from_pretrained(SPEC.name, { dtype: 'q8', device: 'cpu' });
  weights = generateWeights(SPEC);
});

afterAll(async () => {
  disposeOwned();
  await model?.dispose();
  await q8Model?.dispose();
});

describe('files', () => {
  it('has the Hugging Face layout, config and stamp', () => {
    const files = listFiles(MODEL_DIR);
    expect(files).toEqual(
      [
        STAMP_FILE,
        'config.json',
        'generation_config.json',
        'gguf/model-f32.gguf',
        'gguf/model-q4_0.gguf',
        'gguf/model-q8_0.gguf',
        'onnx/model.onnx',
        'onnx/model_fp16.onnx',
        'onnx/model_fp16.onnx_data',
        'onnx/model_q4.onnx',
        'onnx/model_q4f16.onnx',
        'onnx/model_quantized.onnx',
        'special_tokens_map.json',
        'tokenizer.json',
        'tokenizer_config.json',
      ].sort(),
    );
    const config = JSON.parse(readFileSync(join(MODEL_DIR, 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      model_type: 'llama',
      architectures: ['LlamaForCausalLM'],
      hidden_size: 64,
      intermediate_size: 192,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      vocab_size: 1024,
      max_position_embeddings: 1024,
      rope_theta: 10000,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: true,
      bos_token_id: 1,
      eos_token_id: 2,
      pad_token_id: 0,
      torch_dtype: 'float32',
      use_cache: true,
      hidden_act: 'silu',
    });
    const stamp = readStamp(MODEL_DIR);
    expect(Object.keys(stamp?.files ?? {}).sort()).toEqual(files.filter((f) => f !== STAMP_FILE));
  });

  it('uses only standard ai.onnx ops at opset 17 in fp32 and q8, one file, no external data', () => {
    const allowed = new Set([
      'Add', 'And', 'Cast', 'Concat', 'Div', 'DynamicQuantizeLinear', 'Gather', 'Gemm', 'LessOrEqual', 'MatMul', 'MatMulInteger', 'Mul',
      'Neg', 'Range', 'ReduceMean', 'Reshape', 'Shape', 'Sigmoid', 'Slice', 'Softmax', 'Sqrt', 'Sub', 'Transpose',
      'Unsqueeze', 'Where',
    ]);
    for (const file of ['onnx/model.onnx', 'onnx/model_quantized.onnx']) {
      const m = onnxProto.onnx.ModelProto.decode(readFileSync(join(MODEL_DIR, file)));
      expect(m.opsetImport.map((o) => [o.domain ?? '', Number(o.version)])).toEqual([['', 17]]);
      const graph = m.graph as onnxProto.onnx.IGraphProto;
      for (const n of graph.node ?? []) {
        expect(n.domain ?? '').toBe('');
        expect(allowed.has(n.opType as string), `${n.opType}`).toBe(true);
      }
      for (const t of graph.initializer ?? []) expect(t.externalData ?? []).toHaveLength(0);
      expect(graph.input?.map((v) => v.name)).toEqual(modelInputNames(SPEC));
      expect(graph.output?.map((v) => v.name)).toEqual(modelOutputNames(SPEC));
    }
  });

  it('exposes the I/O names, dtypes and dims transformers.js expects', () => {
    const session = (model as unknown as { sessions: Record<string, { inputNames: string[]; outputNames: string[]; inputMetadata: unknown[]; outputMetadata: unknown[] }> }).sessions['model'];
    expect(session?.inputNames).toEqual(modelInputNames(SPEC));
    expect(session?.outputNames).toEqual(modelOutputNames(SPEC));
    const meta = (list: unknown[]) => Object.fromEntries((list as { name: string; type: string; shape: unknown[] }[]).map((m) => [m.name, [m.type, m.shape]]));
    const inputs = meta(session?.inputMetadata ?? []);
    expect(inputs['input_ids']).toEqual(['int64', ['batch_size', 'sequence_length']]);
    expect(inputs['attention_mask']).toEqual(['int64', ['batch_size', 'total_sequence_length']]);
    expect(inputs['position_ids']).toEqual(['int64', ['batch_size', 'sequence_length']]);
    expect(inputs['past_key_values.1.value']).toEqual(['float32', ['batch_size', 2, 'past_sequence_length', 16]]);
    const outputs = meta(session?.outputMetadata ?? []);
    expect(outputs['logits']).toEqual(['float32', ['batch_size', 'sequence_length', 1024]]);
    expect(outputs['present.0.key']).toEqual(['float32', ['batch_size', 2, 'total_sequence_length', 16]]);
  });
});

describe('forward pass', () => {
  it('matches the independent reference at every position (1e-4)', async () => {
    const ids = tokenizer.encode(PROMPT);
    expect(ids.length).toBeGreaterThan(10);
    const ref = referenceForward(SPEC, weights, ids);
    const out = await forward({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });
    const logits = out['logits'] as Tensor;
    expect(logits.dims).toEqual([1, ids.length, SPEC.vocabSize]);
    expect(out['present.1.key']?.dims).toEqual([1, 2, ids.length, 16]);
    for (let p = 0; p < ids.length; p++) {
      expect(maxAbsDiff(logitsRow(logits, 0, p), ref[p] as Float64Array)).toBeLessThan(TOL);
    }
    disposeOwned();
  });

  it('runs through the raw session with explicit position_ids and empty past', async () => {
    const ids = tokenizer.encode('yes or no');
    const session = (model as unknown as { sessions: Record<string, { run(feeds: Record<string, unknown>): Promise<Record<string, { dims: number[]; data: unknown; dispose(): void }>> }> }).sessions['model'];
    const feeds: Record<string, unknown> = {
      input_ids: i64([ids]).ort_tensor,
      attention_mask: i64([ids.map(() => 1)]).ort_tensor,
      position_ids: i64([ids.map((_, i) => i)]).ort_tensor,
    };
    for (let l = 0; l < SPEC.numHiddenLayers; l++) {
      for (const kv of ['key', 'value']) feeds[`past_key_values.${l}.${kv}`] = own(new Tensor('float32', new Float32Array(0), [1, 2, 0, 16])).ort_tensor;
    }
    const raw = await session!.run(feeds);
    const ref = referenceForward(SPEC, weights, ids);
    const logits = raw['logits']!;
    const V = SPEC.vocabSize;
    for (let p = 0; p < ids.length; p++) {
      expect(maxAbsDiff((logits.data as Float32Array).subarray(p * V, (p + 1) * V), ref[p] as Float64Array)).toBeLessThan(TOL);
    }
    for (const t of Object.values(raw)) t.dispose();
    disposeOwned();
  });

  it('incremental decoding with past_key_values equals the full pass (1e-4)', async () => {
    const ids = tokenizer.encode(PROMPT);
    const n = ids.length - 2;
    const full = await forward({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });

    // prefill n tokens, then feed the remaining two one at a time
    let out = await forward({ input_ids: i64([ids.slice(0, n)]), attention_mask: i64([ids.slice(0, n).map(() => 1)]) });
    for (let p = n; p < ids.length; p++) {
      const cache = cacheFrom(out);
      out = await forward({
        input_ids: i64([[ids[p] as number]]),
        attention_mask: i64([ids.slice(0, p + 1).map(() => 1)]),
        past_key_values: cache,
      });
      expect(out['logits']?.dims).toEqual([1, 1, SPEC.vocabSize]);
      expect(out['present.0.value']?.dims).toEqual([1, 2, p + 1, 16]);
      expect(maxAbsDiff(logitsRow(out['logits'] as Tensor, 0, 0), logitsRow(full['logits'] as Tensor, 0, p))).toBeLessThan(TOL);
    }
    disposeOwned();
  });

  it('a right-padded batch of 2 gives each row’s own logits at real positions', async () => {
    const a = tokenizer.encode('Is the sky blue? Yes, it is.');
    const b = tokenizer.encode('No.');
    const S = a.length;
    const pad = (x: number[]) => [...x, ...Array(S - x.length).fill(0)];
    const batch = await forward({
      input_ids: i64([a, pad(b)]),
      attention_mask: i64([a.map(() => 1), pad(b.map(() => 1))]),
    });
    for (const [row, ids] of [a, b].entries()) {
      const alone = await forward({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });
      const ref = referenceForward(SPEC, weights, ids);
      for (let p = 0; p < ids.length; p++) {
        const got = logitsRow(batch['logits'] as Tensor, row, p);
        expect(maxAbsDiff(got, logitsRow(alone['logits'] as Tensor, 0, p))).toBeLessThan(TOL);
        expect(maxAbsDiff(got, ref[p] as Float64Array)).toBeLessThan(TOL);
      }
    }
    disposeOwned();
  });

  it('a left-padded batch matches too, also when decoding one more token with the cache', async () => {
    const a = tokenizer.encode('The answer is true');
    const b = tokenizer.encode('false');
    const S = a.length;
    const lpad = (x: number[], v: number) => [...Array(S - x.length).fill(v), ...x];
    const mask = [a.map(() => 1), lpad(b.map(() => 1), 0)];
    const prefill = await forward({ input_ids: i64([a, lpad(b, 0)]), attention_mask: i64(mask) });
    const next = [17, 42];
    const step = await forward({
      input_ids: i64(next.map((t) => [t])),
      attention_mask: i64(mask.map((m) => [...m, 1])),
      past_key_values: cacheFrom(prefill),
    });
    for (const [row, ids] of [a, b].entries()) {
      const ref = referenceForward(SPEC, weights, [...ids, next[row] as number]);
      const offset = S - ids.length;
      for (let p = 0; p < ids.length; p++) {
        expect(maxAbsDiff(logitsRow(prefill['logits'] as Tensor, row, offset + p), ref[p] as Float64Array)).toBeLessThan(TOL);
      }
      expect(maxAbsDiff(logitsRow(step['logits'] as Tensor, row, 0), ref[ids.length] as Float64Array)).toBeLessThan(TOL);
    }
    disposeOwned();
  });

  it('generate() (greedy, with its own KV cache) follows the reference argmax chain', async () => {
    const ids = tokenizer.encode('Please answer with yes or no.');
    const chain = ids.slice();
    for (let k = 0; k < 6; k++) {
      const ref = referenceForward(SPEC, weights, chain);
      chain.push(stats(ref[chain.length - 1] as Float64Array).argmax);
    }
    const generated = own(
      (await model.generate({
        input_ids: i64([ids]),
        attention_mask: i64([ids.map(() => 1)]),
        max_new_tokens: 6,
        min_new_tokens: 6,
        do_sample: false,
      } as never)) as Tensor,
    );
    expect((generated.tolist() as bigint[][])[0]?.map(Number)).toEqual(chain);
    disposeOwned();
  });

  it('is numerically healthy: logits std in [1.5, 4], neither one-hot nor uniform, prompt-dependent', async () => {
    const rows: ReturnType<typeof stats>[] = [];
    for (const text of ['The cat sat on the mat', 'Is water wet?', '{"decision": "', '12345']) {
      const ids = tokenizer.encode(text);
      const out = await forward({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });
      const s = stats(logitsRow(out['logits'] as Tensor, 0, ids.length - 1));
      expect(s.std).toBeGreaterThan(1.5);
      expect(s.std).toBeLessThan(4);
      expect(s.pmax).toBeGreaterThan(10 / SPEC.vocabSize);
      expect(s.pmax).toBeLessThan(0.9);
      rows.push(s);
      disposeOwned();
    }
    // different prompts → visibly different next-token distributions (total variation distance)
    for (let i = 0; i < rows.length; i++) {
      for (let j = i + 1; j < rows.length; j++) {
        const tv = 0.5 * (rows[i] as { probs: number[] }).probs.reduce((acc, p, k) => acc + Math.abs(p - ((rows[j] as { probs: number[] }).probs[k] as number)), 0);
        expect(tv).toBeGreaterThan(0.2);
      }
    }
    expect(new Set(rows.map((r) => r.argmax)).size).toBeGreaterThan(1);
  });
});

describe('q8 variant', () => {
  const dequantized = (): LlamaWeights => {
    const h = SPEC.hiddenSize;
    const qd = SPEC.numAttentionHeads * SPEC.headDim;
    const kvd = SPEC.numKeyValueHeads * SPEC.headDim;
    const I = SPEC.intermediateSize;
    const dq = (w: Float32Array, r: number, c: number) => dequantize(quantizePerColumn(w, r, c));
    return {
      embed: weights.embed,
      finalNorm: weights.finalNorm,
      layers: weights.layers.map(
        (l): LayerWeights => ({
          ...l,
          q: dq(l.q, h, qd),
          k: dq(l.k, h, kvd),
          v: dq(l.v, h, kvd),
          o: dq(l.o, qd, h),
          gate: dq(l.gate, h, I),
          up: dq(l.up, h, I),
          down: dq(l.down, I, h),
        }),
      ),
    };
  };

  it(`loads with dtype 'q8'; its logits stay within ${Q8_VS_FP32_TOL} of fp32`, async () => {
    const ids = tokenizer.encode(PROMPT);
    const inputs = () => ({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });
    const q8 = await forward(inputs(), q8Model);
    const fp32 = await forward(inputs());
    let worst = 0;
    for (let p = 0; p < ids.length; p++) {
      worst = Math.max(worst, maxAbsDiff(logitsRow(q8['logits'] as Tensor, 0, p), logitsRow(fp32['logits'] as Tensor, 0, p)));
    }
    expect(worst).toBeGreaterThan(0); // it really is a different (quantized) model
    expect(worst).toBeLessThan(Q8_VS_FP32_TOL);
    disposeOwned();
  });

  // The q8 file quantizes its activations at run time (DynamicQuantizeLinear), so it does not
  // compute the dequantized weights exactly; test/models/formats.test.ts bounds its drift from the
  // float64 reference of those weights and from fp32 with measured tolerances.
  it('q8 is quantize_dynamic style: MatMulInteger on int8 weights with float16-valued scales', () => {
    const m = onnxProto.onnx.ModelProto.decode(readFileSync(join(MODEL_DIR, 'onnx/model_quantized.onnx')));
    const graph = m.graph as onnxProto.onnx.IGraphProto;
    const ops = (graph.node ?? []).map((n) => n.opType);
    expect(ops.filter((o) => o === 'MatMulInteger')).toHaveLength(7 * SPEC.numHiddenLayers);
    expect(ops.filter((o) => o === 'DynamicQuantizeLinear')).toHaveLength(4 * SPEC.numHiddenLayers); // x for qkv, ctx, x2 for gate/up, mlp
    const dq = dequantized();
    expect(dq.layers[0]?.q).not.toEqual(weights.layers[0]?.q);
  });
});

describe('tokenizer', () => {
  const SAMPLES = [
    'Hello, world!',
    'The quick brown fox jumps over the lazy dog.',
    '  leading and trailing spaces  ',
    'tabs\tand\nnew\r\nlines\n\n',
    'Ünïcödé àccénts: café, naïve, Straße, øre',
    '中文字符和日本語のテキスト, 한국어',
    'emoji 🤖🎉👍🏽 family 👨‍👩‍👧‍👦 flags 🇫🇷',
    'math ∑∫√ π≈3.14159, numbers 1234567890',
    '{"decision": "yes", "confidence": 0.93}',
    "it's we're they've I'm you'll he'd",
    'special <|im_start|>user\nhi<|im_end|>\n',
    '\u0000\u0001 control \u007f chars',
  ];

  it('round-trips any UTF-8 text', () => {
    for (const s of SAMPLES) {
      const ids = tokenizer.encode(s, { add_special_tokens: false });
      expect(tokenizer.decode(ids), JSON.stringify(s)).toBe(s);
    }
  });

  it('has exactly vocab_size ids, the special tokens at 0..2 and single-token common words', () => {
    expect(tokenizer.get_vocab().size).toBe(SPEC.vocabSize);
    expect(tokenizer.convert_tokens_to_ids(['<|endoftext|>', '<|im_start|>', '<|im_end|>'])).toEqual([0, 1, 2]);
    expect(tokenizer.eos_token).toBe('<|im_end|>');
    expect(tokenizer.bos_token).toBe('<|im_start|>');
    expect(tokenizer.pad_token).toBe('<|endoftext|>');
    for (const w of ['the', 'true', 'false', 'yes', 'no', ' the', ' true', ' false', ' yes', ' no', 'True', ' False', 'Yes', ' No']) {
      expect(tokenizer.encode(w, { add_special_tokens: false }), JSON.stringify(w)).toHaveLength(1);
    }
    // no BOS/EOS added by default (GPT-2 / SmolLM2 behaviour)
    expect(tokenizer.encode('the answer')).toHaveLength(2);
  });

  it('renders the ChatML chat template', () => {
    expect(tokenizer.chat_template).toBe(CHAT_TEMPLATE);
    const messages = [{ role: 'user', content: 'Is the sky blue?' }];
    const text = tokenizer.apply_chat_template(messages, { tokenize: false, add_generation_prompt: true });
    expect(text).toBe(
      '<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\nIs the sky blue?<|im_end|>\n<|im_start|>assistant\n',
    );
    const withSystem = tokenizer.apply_chat_template(
      [{ role: 'system', content: 'Answer yes or no.' }, ...messages, { role: 'assistant', content: 'yes' }],
      { tokenize: false },
    );
    expect(withSystem).toBe(
      '<|im_start|>system\nAnswer yes or no.<|im_end|>\n<|im_start|>user\nIs the sky blue?<|im_end|>\n<|im_start|>assistant\nyes<|im_end|>\n',
    );
    // transformers.js 4.x defaults to return_dict: true ({ input_ids, attention_mask })
    const ids = tokenizer.apply_chat_template(messages, { add_generation_prompt: true, return_tensor: false, return_dict: false }) as number[];
    expect(ids[0]).toBe(1);
    expect(ids.filter((t) => t === 2)).toHaveLength(2);
    expect(tokenizer.decode(ids)).toBe(text);
  });
});

describe('determinism', () => {
  it('generating twice gives byte-identical files (and the same as models/)', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'gen-a-')), mkdtempSync(join(tmpdir(), 'gen-b-'))];
    try {
      const hashes: Record<string, string>[] = [];
      for (const dir of dirs) {
        // no wall-clock bound here: on a loaded CI machine it flakes, and speed is the bench's business
        const [result] = await generateModels({ only: SPEC.name, outDir: dir, force: true });
        expect(result?.skipped).toBe(false);
        const root = join(dir, SPEC.name);
        hashes.push(Object.fromEntries(listFiles(root).filter((f) => f !== STAMP_FILE).map((f) => [f, sha256File(join(root, f))])));
      }
      expect(hashes[0]).toEqual(hashes[1]);
      const stamp = readStamp(MODEL_DIR);
      expect(Object.fromEntries(Object.entries(stamp?.files ?? {}).map(([f, r]) => [f, r.sha256]))).toEqual(hashes[0]);
      // a second run without --force is a no-op
      const [again] = await generateModels({ only: 'tiny', outDir: dirs[0] as string });
      expect(again?.skipped).toBe(true);
      expect(relative(dirs[0] as string, again?.dir ?? '')).toBe(SPEC.name);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});

// The SmolLM2-shaped model (≈ 540 MB, 6 s to write): generated here when missing or stale.
const SMOL_DIR = join(DEFAULT_MODELS_DIR, SMOL.name);
describe(SMOL.name, () => {
  beforeAll(async () => {
    await generateModels({ only: SMOL.name });
  }, 300_000);

  it('loads in transformers.js, is healthy and decodes incrementally like the full pass', async () => {
    const config = JSON.parse(readFileSync(join(SMOL_DIR, 'config.json'), 'utf8'));
    expect(config).toMatchObject({ num_hidden_layers: 30, hidden_size: 576, num_attention_heads: 9, num_key_value_heads: 3, head_dim: 64, vocab_size: 49152 });
    const tok = await AutoTokenizer.from_pretrained(SMOL.name);
    expect(tok.get_vocab().size).toBe(49152);
    const smol = await AutoModelForCausalLM.from_pretrained(SMOL.name, { dtype: 'fp32', device: 'cpu' });
    try {
      const rows: ReturnType<typeof stats>[] = [];
      for (const text of ['The cat sat on the mat', 'Is water wet?', PROMPT]) {
        const ids = tok.encode(text);
        const full = await forward({ input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) }, smol);
        expect(full['present.29.value']?.dims).toEqual([1, 3, ids.length, 64]);
        const last = logitsRow(full['logits'] as Tensor, 0, ids.length - 1);
        const s = stats(last);
        expect(s.std).toBeGreaterThan(1.5);
        expect(s.std).toBeLessThan(4);
        expect(s.pmax).toBeGreaterThan(100 / SMOL.vocabSize);
        expect(s.pmax).toBeLessThan(0.9);
        rows.push(s);
        const prefix = ids.slice(0, -1);
        const pre = await forward({ input_ids: i64([prefix]), attention_mask: i64([prefix.map(() => 1)]) }, smol);
        const step = await forward(
          { input_ids: i64([[ids.at(-1) as number]]), attention_mask: i64([ids.map(() => 1)]), past_key_values: cacheFrom(pre) },
          smol,
        );
        expect(maxAbsDiff(logitsRow(step['logits'] as Tensor, 0, 0), last)).toBeLessThan(TOL);
        disposeOwned();
      }
      for (let i = 0; i < rows.length; i++) {
        for (let j = i + 1; j < rows.length; j++) {
          const a = (rows[i] as { probs: number[] }).probs;
          const b = (rows[j] as { probs: number[] }).probs;
          expect(0.5 * a.reduce((acc, p, k) => acc + Math.abs(p - (b[k] as number)), 0)).toBeGreaterThan(0.2);
        }
      }
    } finally {
      disposeOwned();
      await smol.dispose();
    }
  });
});
