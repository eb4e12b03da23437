/**
 * The GGUF copy of a family model (families.ts), for llama.cpp peers (wllama):
 * `gguf/model-f32.gguf`, the very same f32 weights, real tokenizer (gguf-vocab.ts) and
 * hyper-parameters as the ONNX files, laid out the way convert_hf_to_gguf.py lays out each family:
 *
 *   qwen2   arch `qwen2`: NEOX (rotate-half) RoPE, so q/k rows stay in Hugging Face order;
 *           attn_q/k/v carry `.bias`; tied output → no `output.weight`.
 *   qwen3   arch `qwen3`: no biases; per-head `attn_q_norm` / `attn_k_norm`; head_dim through
 *           `attention.key_length` / `value_length` (4 × 16 ≠ hidden 32).
 *   llama3  arch `llama`: interleaved RoPE, so q/k rows permuted (`LlamaModel.permute`); the llama3
 *           rope scaling as `rope_freqs.weight`, llama.cpp's per-frequency divisors
 *           (`LlamaModel.generate_extra_tensors`: 1, factor, or 1 / ((1 - s)/factor + s)).
 *   phi3    arch `phi3`: NEOX RoPE; fused `attn_qkv` (q, k, v rows) and `ffn_up` (gate rows, then up
 *           rows: llama.cpp's fused SwiGLU); untied `output`; longrope as `rope_factors_short` /
 *           `rope_factors_long` (llama.cpp picks short while n_ctx ≤ original context) plus
 *           `rope.scaling.attn_factor` = sqrt(1 + ln(max/orig) / ln(orig)); SentencePiece tokenizer.
 *   gemma3  arch `gemma3` (Gemma3Model): NEOX RoPE; every `*norm.weight` stored as 1 + w (Gemma's
 *           (1 + w) RMSNorm); four norms per layer (`attn_norm`, `post_attention_norm`, `ffn_norm`
 *           = pre-feedforward, `post_ffw_norm`) plus q/k norms; `attention.sliding_window`; tied.
 *           llama.cpp fixes the rest (llama-model.cpp, LLM_ARCH_GEMMA3 hparams): layers 5 of every
 *           6 sliding (set_swa_pattern(6)), local rope base 10000, query scale head_dim^-0.5 (all
 *           sizes but 27B), √hidden embedding scale, GELU-tanh; so families.ts's Gemma spec is
 *           chosen to match those. SentencePiece tokenizer without the space prefix (gguf-vocab.ts).
 *
 * Matrices: the generator keeps [in, out]; GGUF wants Hugging Face's [out, in] (ggml ne = [in, out]).
 */
import type { Hash } from 'node:crypto';
import type { FamilySpec } from './families.ts';
import { type GgufTensorSpec, type GgufValue, GgmlType, gguf, writeGguf } from './gguf.ts';
import { permuteRope, transposeToHf } from './gguf-llama.ts';
import { familyRopeAttentionFactor } from './family-rope.ts';
import { concatColumns } from './family-weights.ts';
import { type GgufPreTokenizer, bpeGgufVocab, spmGgufVocab } from './gguf-vocab.ts';
import type { FamilyWeights } from './family-weights.ts';

export { GGUF_F32_FILE } from './gguf-llama.ts';

/** Families with a GGUF writer, and their llama.cpp architecture names. */
const GGUF_ARCH: Partial<Record<FamilySpec['family'], string>> = { qwen2: 'qwen2', qwen3: 'qwen3', llama3: 'llama', phi3: 'phi3', gemma3: 'gemma3' };
/** Byte-level BPE pre-tokenizers; `spm` = SentencePiece (tokenizer model `llama`). */
const GGUF_PRE: Partial<Record<FamilySpec['family'], GgufPreTokenizer | 'spm'>> = { qwen2: 'qwen2', qwen3: 'qwen2', llama3: 'llama-bpe', phi3: 'spm', gemma3: 'spm' };

export function hasFamilyGguf(spec: FamilySpec): boolean {
  return GGUF_ARCH[spec.family] !== undefined;
}

/** The model's own files the GGUF's tokenizer comes from. */
export interface FamilyGgufSources {
  readonly tokenizerJson: Buffer;
  readonly tokenizerConfig: Buffer;
  /** config.json text. */
  readonly config: string;
}

/**
 * llama.cpp's `rope_freqs` for transformers' llama3 rope scaling: theta_i is divided by the
 * returned factor (float32 frequencies, as the converter computes them with torch).
 */
export function llama3RopeFreqFactors(spec: FamilySpec): Float32Array {
  const sc = spec.ropeScaling;
  if (sc?.ropeType !== 'llama3') throw new Error(`spec ${spec.name}: no llama3 rope scaling`);
  const D = spec.headDim;
  const lowWavelen = sc.originalMaxPositionEmbeddings / sc.lowFreqFactor;
  const highWavelen = sc.originalMaxPositionEmbeddings / sc.highFreqFactor;
  const out = new Float32Array(D / 2);
  for (let i = 0; i < D / 2; i++) {
    const freq = Math.fround(1 / Math.fround(spec.ropeTheta ** Math.fround((2 * i) / D)));
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < highWavelen) out[i] = 1;
    else if (wavelen > lowWavelen) out[i] = sc.factor;
    else {
      const s = (sc.originalMaxPositionEmbeddings / wavelen - sc.lowFreqFactor) / (sc.highFreqFactor - sc.lowFreqFactor);
      out[i] = 1 / ((1 - s) / sc.factor + s);
    }
  }
  return out;
}

export function familyGgufMetadata(spec: FamilySpec, src: FamilyGgufSources): [string, GgufValue][] {
  const arch = GGUF_ARCH[spec.family];
  const pre = GGUF_PRE[spec.family];
  if (!arch || !pre) throw new Error(`spec ${spec.name}: no GGUF writer for family ${spec.family}`);
  const a = (key: string) => `${arch}.${key}`;
  const meta: [string, GgufValue][] = [
    ['general.architecture', gguf.str(arch)],
    ['general.type', gguf.str('model')],
    ['general.name', gguf.str(spec.name)],
    ['general.description', gguf.str(`Random-weight ${spec.name} (f32) generated by scripts/models; for tests only.`)],
    ['general.file_type', gguf.u32(0)], // LLAMA_FTYPE_ALL_F32
    ['general.alignment', gguf.u32(32)],
    [a('vocab_size'), gguf.u32(spec.vocabSize)],
    [a('context_length'), gguf.u32(spec.maxPositionEmbeddings)],
    [a('embedding_length'), gguf.u32(spec.hiddenSize)],
    [a('block_count'), gguf.u32(spec.numHiddenLayers)],
    [a('feed_forward_length'), gguf.u32(spec.intermediateSize)],
    [a('rope.dimension_count'), gguf.u32(spec.headDim)],
    [a('attention.head_count'), gguf.u32(spec.numAttentionHeads)],
    [a('attention.head_count_kv'), gguf.u32(spec.numKeyValueHeads)],
    [a('attention.key_length'), gguf.u32(spec.headDim)],
    [a('attention.value_length'), gguf.u32(spec.headDim)],
    [a('attention.layer_norm_rms_epsilon'), gguf.f32(spec.rmsNormEps)],
    [a('rope.freq_base'), gguf.f32(spec.ropeTheta)],
  ];
  const config = JSON.parse(src.config) as Record<string, unknown>;
  const sc = spec.ropeScaling;
  if (sc?.ropeType === 'longrope') {
    meta.push(
      [a('rope.scaling.attn_factor'), gguf.f32(familyRopeAttentionFactor(spec))],
      [a('rope.scaling.original_context_length'), gguf.u32(sc.originalMaxPositionEmbeddings)],
    );
  }
  if (spec.family === 'phi3') meta.push([a('attention.sliding_window'), gguf.u32(typeof config['sliding_window'] === 'number' ? config['sliding_window'] : 0)]);
  if (spec.family === 'gemma3') {
    const fail = (why: string): never => {
      throw new Error(`spec ${spec.name}: llama.cpp's gemma3 cannot represent ${why}`);
    };
    if (spec.slidingWindow === undefined) fail('a model without sliding_window');
    if (spec.slidingWindowPattern !== 6) fail(`sliding_window_pattern ${spec.slidingWindowPattern} (fixed at 6)`);
    if (spec.ropeLocalTheta !== 10000) fail(`rope_local_base_freq ${spec.ropeLocalTheta} (fixed at 10000)`);
    if (spec.queryPreAttnScalar !== spec.headDim) fail(`query_pre_attn_scalar ${spec.queryPreAttnScalar} ≠ head_dim ${spec.headDim} (scale fixed at head_dim^-0.5)`);
    meta.push([a('attention.sliding_window'), gguf.u32(spec.slidingWindow as number)]);
  }
  const vocab =
    pre === 'spm'
      ? spmGgufVocab(src.tokenizerJson, src.tokenizerConfig, config, spec.vocabSize, spec.family === 'gemma3')
      : bpeGgufVocab(src.tokenizerJson, src.tokenizerConfig, config, spec.vocabSize, pre);
  return [...meta, ...vocab];
}

/** The tensors in llama.cpp's names and layouts; data is produced lazily, one tensor at a time. */
export function familyGgufTensors(spec: FamilySpec, w: FamilyWeights): GgufTensorSpec[] {
  if (!hasFamilyGguf(spec)) throw new Error(`spec ${spec.name}: no GGUF writer for family ${spec.family}`);
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const inter = spec.intermediateSize;
  // llama.cpp's `llama` arch rotates interleaved pairs; qwen2/qwen3 use NEOX (rotate-half) like HF
  const interleaved = spec.family === 'llama3';
  const qk = (m: Float32Array, heads: number) => {
    const hf = transposeToHf(m, h, heads * D);
    return interleaved ? permuteRope(hf, heads, D, h) : hf;
  };
  const f32 = (name: string, ne: number[], data: () => Float32Array): GgufTensorSpec => ({ name, ne, type: GgmlType.F32, data });
  const need = (x: Float32Array | undefined, what: string): Float32Array => {
    if (!x) throw new Error(`spec ${spec.name}: weights lack ${what}`);
    return x;
  };
  // Gemma3Model.modify_tensors: `norm.weight` tensors + 1, llama.cpp then multiplies by them as they are
  const norm = (x: Float32Array): Float32Array => (spec.gemma ? x.map((v) => v + 1) : x);
  const tensors: GgufTensorSpec[] = [f32('token_embd.weight', [h, spec.vocabSize], () => w.embed)];
  const sc = spec.ropeScaling;
  if (sc?.ropeType === 'llama3') tensors.push(f32('rope_freqs.weight', [D / 2], () => llama3RopeFreqFactors(spec)));
  if (sc?.ropeType === 'longrope') {
    tensors.push(f32('rope_factors_long.weight', [D / 2], () => Float32Array.from(sc.longFactor)));
    tensors.push(f32('rope_factors_short.weight', [D / 2], () => Float32Array.from(sc.shortFactor)));
  }
  w.layers.forEach((l, i) => {
    const p = `blk.${i}.`;
    tensors.push(f32(`${p}attn_norm.weight`, [h], () => norm(l.inputNorm)));
    if (spec.fused) {
      // HF qkv_proj [q + 2kv, in] and gate_up_proj [2·inter, in]: the generator's [in, out] parts side by side, transposed
      const qkv = () => concatColumns([{ data: l.q, cols: H * D }, { data: l.k, cols: KV * D }, { data: l.v, cols: KV * D }], h);
      const gateUp = () => concatColumns([{ data: l.gate, cols: inter }, { data: l.up, cols: inter }], h);
      tensors.push(
        f32(`${p}attn_qkv.weight`, [h, (H + 2 * KV) * D], () => transposeToHf(qkv(), h, (H + 2 * KV) * D)),
        f32(`${p}attn_output.weight`, [H * D, h], () => transposeToHf(l.o, H * D, h)),
        f32(`${p}ffn_norm.weight`, [h], () => l.postAttnNorm),
        f32(`${p}ffn_up.weight`, [h, 2 * inter], () => transposeToHf(gateUp(), h, 2 * inter)),
        f32(`${p}ffn_down.weight`, [inter, h], () => transposeToHf(l.down, inter, h)),
      );
      return;
    }
    tensors.push(f32(`${p}attn_q.weight`, [h, H * D], () => qk(l.q, H)));
    if (spec.qkvBias) tensors.push(f32(`${p}attn_q.bias`, [H * D], () => need(l.qBias, 'q bias')));
    tensors.push(f32(`${p}attn_k.weight`, [h, KV * D], () => qk(l.k, KV)));
    if (spec.qkvBias) tensors.push(f32(`${p}attn_k.bias`, [KV * D], () => need(l.kBias, 'k bias')));
    tensors.push(f32(`${p}attn_v.weight`, [h, KV * D], () => transposeToHf(l.v, h, KV * D)));
    if (spec.qkvBias) tensors.push(f32(`${p}attn_v.bias`, [KV * D], () => need(l.vBias, 'v bias')));
    if (spec.qkNorm) {
      tensors.push(f32(`${p}attn_q_norm.weight`, [D], () => norm(need(l.qNorm, 'q norm'))));
      tensors.push(f32(`${p}attn_k_norm.weight`, [D], () => norm(need(l.kNorm, 'k norm'))));
    }
    tensors.push(f32(`${p}attn_output.weight`, [H * D, h], () => transposeToHf(l.o, H * D, h)));
    if (spec.gemma) {
      // Gemma: post_attention_layernorm normalises the attention output; pre_feedforward_layernorm feeds the MLP
      tensors.push(
        f32(`${p}post_attention_norm.weight`, [h], () => norm(l.postAttnNorm)),
        f32(`${p}ffn_norm.weight`, [h], () => norm(need(l.preFfNorm, 'pre-feedforward norm'))),
        f32(`${p}post_ffw_norm.weight`, [h], () => norm(need(l.postFfNorm, 'post-feedforward norm'))),
      );
    } else tensors.push(f32(`${p}ffn_norm.weight`, [h], () => l.postAttnNorm));
    tensors.push(
      f32(`${p}ffn_gate.weight`, [h, inter], () => transposeToHf(l.gate, h, inter)),
      f32(`${p}ffn_up.weight`, [h, inter], () => transposeToHf(l.up, h, inter)),
      f32(`${p}ffn_down.weight`, [inter, h], () => transposeToHf(l.down, inter, h)),
    );
  });
  tensors.push(f32('output_norm.weight', [h], () => norm(w.finalNorm)));
  if (w.lmHead) tensors.push(f32('output.weight', [h, spec.vocabSize], () => transposeToHf(w.lmHead as Float32Array, h, spec.vocabSize)));
  return tensors;
}

/** Writes `<path>` (GGUF v3, f32); returns its size. */
export function writeFamilyGguf(path: string, spec: FamilySpec, weights: FamilyWeights, src: FamilyGgufSources, hash?: Hash): number {
  return writeGguf(path, familyGgufMetadata(spec, src), familyGgufTensors(spec, weights), hash).bytes;
}
