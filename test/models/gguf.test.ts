/**
 * The GGUF copy of the generated models (gguf/model-f32.gguf): the file format read back by an
 * independent reader, llama.cpp's metadata keys and tensor layouts, the tokenizer tables, and the
 * weights themselves — an independent float64 forward pass on the GGUF tensors with llama.cpp's
 * interleaved RoPE must equal the Hugging Face reference (rotate-half RoPE) on the original weights.
 * (That llama.cpp itself agrees is gguf-wllama.test.ts.)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { GgufType } from '../../scripts/models/gguf.ts';
import { type GgufFile, readGguf } from '../../scripts/models/gguf-read.ts';
import { GGUF_F32_FILE, TOKEN_TYPE, llamaGgufMetadata, llamaGgufTensors, writeLlamaGguf } from '../../scripts/models/gguf-llama.ts';
import { CHAT_TEMPLATE } from '../../scripts/models/hf-files.ts';
import { type ModelSpec, SMOLLM2_135M_RANDOM as SMOL, TINY_RANDOM_LLAMA as SPEC } from '../../scripts/models/specs.ts';
import { SPECIAL_TOKENS, buildBpeModel } from '../../scripts/models/tokenizer.ts';
import { type LlamaWeights, generateWeights } from '../../scripts/models/weights.ts';
import { readStamp } from '../../scripts/models/write-model.ts';
import { referenceForward } from './reference-llama.ts';

const MODEL_DIR = join(DEFAULT_MODELS_DIR, SPEC.name);
const GGUF_PATH = join(MODEL_DIR, GGUF_F32_FILE);

let file: GgufFile;
let weights: LlamaWeights;

beforeAll(async () => {
  await generateModels({ only: SPEC.name });
  file = readGguf(GGUF_PATH);
  weights = generateWeights(SPEC);
});
afterAll(() => file?.close());

const meta = (key: string) => {
  const v = file.metadata.get(key);
  if (!v) throw new Error(`missing ${key}`);
  return v;
};
const f32 = (x: number) => Math.fround(x);

/** HF weight [out, in] row-major from the generator's [in, out]. */
function hf(w: Float32Array, inDim: number, outDim: number): Float32Array {
  const out = new Float32Array(w.length);
  for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) out[o * inDim + i] = w[i * outDim + o]!;
  return out;
}

describe('file', () => {
  it('is GGUF v3 with 32-byte alignment, listed in the stamp with its size and sha256', () => {
    expect(file.version).toBe(3);
    expect(file.alignment).toBe(32);
    expect(file.dataOffset % 32).toBe(0);
    for (const t of file.tensors) expect((t.offset - file.dataOffset) % 32).toBe(0);
    const bytes = readFileSync(GGUF_PATH);
    const rec = readStamp(MODEL_DIR)!.files[GGUF_F32_FILE]!;
    expect(rec.bytes).toBe(bytes.length);
    expect(rec.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  it('is deterministic: writing again gives the same bytes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gguf-'));
    try {
      const hash = createHash('sha256');
      writeLlamaGguf(join(dir, 'm.gguf'), SPEC, weights, buildBpeModel(SPEC.vocabSize, SPEC.seed), hash);
      expect(hash.digest('hex')).toBe(readStamp(MODEL_DIR)!.files[GGUF_F32_FILE]!.sha256);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('metadata', () => {
  it('has llama.cpp llama-architecture hyper-parameters with the spec values and types', () => {
    expect(meta('general.architecture').value).toBe('llama');
    expect(meta('general.file_type').value).toBe(0);
    const u32 = {
      'llama.context_length': SPEC.maxPositionEmbeddings,
      'llama.embedding_length': SPEC.hiddenSize,
      'llama.block_count': SPEC.numHiddenLayers,
      'llama.feed_forward_length': SPEC.intermediateSize,
      'llama.rope.dimension_count': SPEC.headDim,
      'llama.attention.head_count': SPEC.numAttentionHeads,
      'llama.attention.head_count_kv': SPEC.numKeyValueHeads,
      'llama.attention.key_length': SPEC.headDim,
      'llama.attention.value_length': SPEC.headDim,
      'llama.vocab_size': SPEC.vocabSize,
    };
    for (const [k, v] of Object.entries(u32)) {
      expect(meta(k).type, k).toBe(GgufType.UINT32);
      expect(meta(k).value, k).toBe(v);
    }
    expect(meta('llama.rope.freq_base')).toEqual({ type: GgufType.FLOAT32, value: f32(SPEC.ropeTheta) });
    expect(meta('llama.attention.layer_norm_rms_epsilon')).toEqual({ type: GgufType.FLOAT32, value: f32(SPEC.rmsNormEps) });
  });

  it('carries the byte-level BPE tokenizer as llama.cpp gpt2 / gpt-2, ids and merges in order', () => {
    const bpe = buildBpeModel(SPEC.vocabSize, SPEC.seed);
    const tj = JSON.parse(readFileSync(join(MODEL_DIR, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number>; merges: string[] } };
    const byId: string[] = [];
    for (const [tok, id] of Object.entries(tj.model.vocab)) byId[id] = tok;
    expect(meta('tokenizer.ggml.model').value).toBe('gpt2');
    expect(meta('tokenizer.ggml.pre').value).toBe('gpt-2');
    expect(meta('tokenizer.ggml.tokens').value).toEqual(byId);
    expect(meta('tokenizer.ggml.tokens').value).toEqual(bpe.vocab);
    expect(meta('tokenizer.ggml.merges').value).toEqual(tj.model.merges);
    const types = meta('tokenizer.ggml.token_type');
    expect(types.itemType).toBe(GgufType.INT32);
    expect((types.value as number[]).slice(0, SPECIAL_TOKENS.length)).toEqual(SPECIAL_TOKENS.map(() => TOKEN_TYPE.CONTROL));
    expect((types.value as number[]).slice(SPECIAL_TOKENS.length).every((t) => t === TOKEN_TYPE.NORMAL)).toBe(true);
    expect(meta('tokenizer.ggml.bos_token_id').value).toBe(1);
    expect(meta('tokenizer.ggml.eos_token_id').value).toBe(2);
    expect(meta('tokenizer.ggml.padding_token_id').value).toBe(0);
    expect(meta('tokenizer.ggml.add_bos_token').value).toBe(false);
    expect(meta('tokenizer.ggml.add_eos_token').value).toBe(false);
    expect(meta('tokenizer.chat_template').value).toBe(CHAT_TEMPLATE);
  });
});

/** Expected llama.cpp tensor names and ggml shapes (ne[0] fastest) for a spec. */
function expectedShapes(spec: ModelSpec): [string, number[]][] {
  const h = spec.hiddenSize;
  const q = spec.numAttentionHeads * spec.headDim;
  const kv = spec.numKeyValueHeads * spec.headDim;
  const f = spec.intermediateSize;
  const out: [string, number[]][] = [['token_embd.weight', [h, spec.vocabSize]]];
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    out.push(
      [`blk.${i}.attn_norm.weight`, [h]],
      [`blk.${i}.attn_q.weight`, [h, q]],
      [`blk.${i}.attn_k.weight`, [h, kv]],
      [`blk.${i}.attn_v.weight`, [h, kv]],
      [`blk.${i}.attn_output.weight`, [q, h]],
      [`blk.${i}.ffn_norm.weight`, [h]],
      [`blk.${i}.ffn_gate.weight`, [h, f]],
      [`blk.${i}.ffn_up.weight`, [h, f]],
      [`blk.${i}.ffn_down.weight`, [f, h]],
    );
  }
  out.push(['output_norm.weight', [h]]);
  return out;
}

describe('tensors', () => {
  it('are llama.cpp names and shapes, f32, tied embeddings (no output.weight)', () => {
    expect(file.tensors.map((t) => [t.name, t.ne])).toEqual(expectedShapes(SPEC));
    expect(file.tensors.every((t) => t.type === 0)).toBe(true);
    expect(file.tensors.some((t) => t.name === 'output.weight')).toBe(false);
  });

  it('for smollm2-135m-random too (shapes and hyper-parameters, without writing 515 MiB)', () => {
    const stub = { layers: Array.from({ length: SMOL.numHiddenLayers }, () => ({})) } as unknown as LlamaWeights;
    expect(llamaGgufTensors(SMOL, stub).map((t) => [t.name, t.ne])).toEqual(expectedShapes(SMOL));
    const m = new Map(llamaGgufMetadata(SMOL, { vocab: [], merges: [], stats: { trained: 0, required: 0, synthetic: 0 } }));
    expect(m.get('llama.rope.freq_base')?.value).toBe(100000);
    expect(m.get('llama.attention.head_count')?.value).toBe(9);
    expect(m.get('llama.attention.head_count_kv')?.value).toBe(3);
    expect(m.get('llama.context_length')?.value).toBe(8192);
    expect(m.get('llama.rope.dimension_count')?.value).toBe(64);
  });

  it('hold the same weights: HF layout, q/k rows permuted to interleaved RoPE pairs', () => {
    const H = SPEC.numAttentionHeads;
    const KV = SPEC.numKeyValueHeads;
    const D = SPEC.headDim;
    const h = SPEC.hiddenSize;
    expect(file.readTensor('token_embd.weight')).toEqual(weights.embed);
    expect(file.readTensor('output_norm.weight')).toEqual(weights.finalNorm);
    weights.layers.forEach((l, i) => {
      const t = (n: string) => file.readTensor(`blk.${i}.${n}.weight`);
      expect(t('attn_norm')).toEqual(l.inputNorm);
      expect(t('ffn_norm')).toEqual(l.postNorm);
      expect(t('attn_v')).toEqual(hf(l.v, h, KV * D));
      expect(t('attn_output')).toEqual(hf(l.o, H * D, h));
      expect(t('ffn_gate')).toEqual(hf(l.gate, h, SPEC.intermediateSize));
      expect(t('ffn_up')).toEqual(hf(l.up, h, SPEC.intermediateSize));
      expect(t('ffn_down')).toEqual(hf(l.down, SPEC.intermediateSize, h));
      // row (head, 2j + s) of the GGUF matrix is HF row (head, s·D/2 + j)
      for (const [name, w, heads] of [['attn_q', l.q, H], ['attn_k', l.k, KV]] as const) {
        const g = t(name);
        const ref = hf(w, h, heads * D);
        for (let hd = 0; hd < heads; hd++)
          for (let j = 0; j < D / 2; j++)
            for (let s = 0; s < 2; s++) {
              const row = g.subarray((hd * D + 2 * j + s) * h, (hd * D + 2 * j + s + 1) * h);
              const src = ref.subarray((hd * D + s * (D / 2) + j) * h, (hd * D + s * (D / 2) + j + 1) * h);
              expect(row).toEqual(src);
            }
      }
    });
  });
});

/**
 * A float64 forward pass the llama.cpp way, on the GGUF tensors only: HF-layout matrices
 * (y[o] = Σ W[o, i] x[i]) and RoPE over adjacent pairs (x[2j], x[2j+1]) with θ_j = pos·base^(-2j/D).
 */
function ggufForward(g: GgufFile, spec: ModelSpec, tokens: readonly number[]): Float64Array[] {
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const F = spec.intermediateSize;
  const eps = f32(spec.rmsNormEps);
  const base = f32(spec.ropeTheta);
  const mv = (w: Float32Array, x: Float64Array, outDim: number) => {
    const inDim = x.length;
    const y = new Float64Array(outDim);
    for (let o = 0; o < outDim; o++) {
      let s = 0;
      for (let i = 0; i < inDim; i++) s += w[o * inDim + i]! * x[i]!;
      y[o] = s;
    }
    return y;
  };
  const norm = (x: Float64Array, w: Float32Array) => {
    let ss = 0;
    for (const v of x) ss += v * v;
    const inv = 1 / Math.sqrt(ss / x.length + eps);
    return x.map((v, i) => v * inv * w[i]!);
  };
  const rope = (x: Float64Array, heads: number, pos: number) => {
    for (let hd = 0; hd < heads; hd++)
      for (let j = 0; j < D / 2; j++) {
        const a = pos * Math.pow(base, (-2 * j) / D);
        const c = Math.cos(a);
        const s = Math.sin(a);
        const i0 = hd * D + 2 * j;
        const x0 = x[i0]!;
        const x1 = x[i0 + 1]!;
        x[i0] = x0 * c - x1 * s;
        x[i0 + 1] = x0 * s + x1 * c;
      }
  };
  const embd = g.readTensor('token_embd.weight');
  let xs = tokens.map((t) => Float64Array.from(embd.subarray(t * h, (t + 1) * h)));
  for (let l = 0; l < spec.numHiddenLayers; l++) {
    const t = (n: string) => g.readTensor(`blk.${l}.${n}.weight`);
    const [wq, wk, wv, wo, an, fn, wg, wu, wd] = ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'attn_norm', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'].map(t) as Float32Array[];
    const K: Float64Array[] = [];
    const V: Float64Array[] = [];
    const Q: Float64Array[] = [];
    xs.forEach((x, p) => {
      const n = norm(x, an!);
      const q = mv(wq!, n, H * D);
      const k = mv(wk!, n, KV * D);
      rope(q, H, p);
      rope(k, KV, p);
      Q.push(q);
      K.push(k);
      V.push(mv(wv!, n, KV * D));
    });
    xs = xs.map((x, p) => {
      const att = new Float64Array(H * D);
      for (let hd = 0; hd < H; hd++) {
        const kh = Math.floor(hd / (H / KV));
        const sc = K.slice(0, p + 1).map((k) => {
          let s = 0;
          for (let e = 0; e < D; e++) s += Q[p]![hd * D + e]! * k[kh * D + e]!;
          return s / Math.sqrt(D);
        });
        const m = Math.max(...sc);
        const ex = sc.map((s) => Math.exp(s - m));
        const z = ex.reduce((a, b) => a + b, 0);
        ex.forEach((w, j) => {
          for (let e = 0; e < D; e++) att[hd * D + e] = att[hd * D + e]! + (w / z) * V[j]![kh * D + e]!;
        });
      }
      const o = mv(wo!, att, h);
      const r = x.map((v, i) => v + o[i]!);
      const n2 = norm(r, fn!);
      const gt = mv(wg!, n2, F);
      const up = mv(wu!, n2, F);
      const act = gt.map((v, i) => (v / (1 + Math.exp(-v))) * up[i]!);
      const dn = mv(wd!, act, h);
      return r.map((v, i) => v + dn[i]!);
    });
  }
  const on = g.readTensor('output_norm.weight');
  return xs.map((x) => mv(embd, norm(x, on), spec.vocabSize));
}

describe('forward pass', () => {
  it('on the GGUF tensors with interleaved RoPE equals the HF reference on the original weights (1e-9)', () => {
    const tokens = [1, 40, 300, 7, 999, 512, 3, 88];
    const a = ggufForward(file, SPEC, tokens);
    // the GGUF stores eps/theta as float32: give the reference the same values
    const b = referenceForward({ ...SPEC, rmsNormEps: f32(SPEC.rmsNormEps), ropeTheta: f32(SPEC.ropeTheta) }, weights, tokens);
    let max = 0;
    a.forEach((row, p) => row.forEach((v, i) => (max = Math.max(max, Math.abs(v - b[p]![i]!)))));
    expect(max).toBeLessThan(1e-9);
  });
});
