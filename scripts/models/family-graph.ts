/**
 * The ONNX graph of a decoder with KV cache, for every model the generator writes but the GQA
 * exports: the family models (families.ts) and, as one instance with every switch off, the Llama
 * models (llama-graph.ts). Inputs and outputs are those transformers.js expects (the names,
 * dtypes and dim_params of an Optimum export):
 *
 *   inputs   input_ids                 int64 [batch_size, sequence_length]
 *            attention_mask            int64 [batch_size, total_sequence_length]
 *            position_ids              int64 [batch_size, sequence_length]
 *            past_key_values.{i}.key   act   [batch_size, kv_heads, past_sequence_length, head_dim]
 *            past_key_values.{i}.value act   [batch_size, kv_heads, past_sequence_length, head_dim]
 *   outputs  logits                    act   [batch_size, sequence_length, vocab]
 *            present.{i}.key / .value  act   [batch_size, kv_heads, total_sequence_length, head_dim]
 *
 * (act: float32, or float16 in the half formats.) Standard ai.onnx ops (opset 17), plus
 * com.microsoft MatMulNBits in the 4-bit formats. Semantics (Hugging Face LlamaForCausalLM):
 *   - RMSNorm: x / sqrt(mean(x²) + eps) · w
 *   - RoPE, rotate-half: x·cos + rotate_half(x)·sin, cos/sin rows gathered by position_ids
 *   - present = concat(past, new) on the sequence axis (keys stored after RoPE)
 *   - GQA: queries reshaped to [B, kv_heads, heads/kv_heads, S, D] and multiplied against the
 *     un-repeated keys/values (broadcast), equivalent to HF's repeat_kv
 *   - mask: query i (absolute index past_len + i) sees key j iff j <= past_len + i AND
 *     attention_mask[b, j] != 0; masked scores get -1e9 added (finite: no NaN on fully masked
 *     padding rows, which then attend uniformly and are ignored)
 *   - MLP: down(silu(gate(x)) · up(x)), silu(x) = x · sigmoid(x)
 *   - tied lm_head: Gemm(hidden, embed_tokens, transB = 1), the embedding stored once
 * What differs per family (the spec's switches):
 *   - Qwen2: q/k/v projections add a bias (present in the weights).
 *   - Qwen3 / Gemma 3: RMSNorm over head_dim of every query and key head (q_norm, k_norm), before
 *     RoPE; head_dim independent of hidden / heads.
 *   - Phi-3 (`fused`): one qkv_proj MatMul split into q, k, v; one gate_up_proj MatMul split into
 *     gate, up; untied lm_head.
 *   - Llama 3.2 / Phi-3.5: scaled rotary tables (family-rope.ts).
 *   - Gemma 3 (`gemma`): embeddings × sqrt(hidden); RMSNorm multiplies by (1 + w); per layer
 *     h += post_attention_norm(attn(input_norm(h))); h += post_feedforward_norm(mlp(pre_feedforward_norm(h)));
 *     MLP down(gelu_tanh(gate) · up); attention scale query_pre_attn_scalar^-0.5; local layers
 *     (sliding window: key j seen by query i iff i - j < sliding_window) use the local rope theta.
 * Formats (linear-formats.ts writes each projection; the Llama models are written in all five,
 * the family models in fp32 and q4):
 *   fp32   the reference
 *   fp16   float16 weights, activations, KV cache and logits. As Hugging Face's LlamaRMSNorm does
 *          under .half(), each RMSNorm casts to float32 for x², mean, eps and 1/sqrt, and casts back
 *          before multiplying by its float16 weight; softmax runs in float16. Masked scores are set
 *          (Where) to -65504, the float16 minimum, instead of adding -1e9 (not finite in float16).
 *   q4     MatMulNBits (bits 4, block 32, float16-representable float32 scales, see
 *          quantize-q4.ts) for every projection; float32 activations; embedding, lm_head, norms,
 *          biases and RoPE tables float32 (as the hub's MatMul4BitsQuantizer leaves them).
 *   q4f16  the same nibbles and scales with float16 scales, activations, KV cache and logits;
 *          embedding / lm_head / RoPE tables float16 (the q4 model converted to float16).
 *   q8     onnxruntime quantize_dynamic (IntegerOps) as the hub's model_quantized.onnx (see
 *          linear-formats.ts and quantize.ts); embedding float32.
 */
import { concatColumns, type FamilyWeights } from './family-weights.ts';
import { type FamilySpec, isSlidingLayer } from './families.ts';
import { FLOAT16_MAX } from './float16.ts';
import { type WeightFormat, activationInit, activationType, formatLinear, isHalfFormat } from './linear-formats.ts';
import { DataType, GraphBuilder } from './onnx-graph.ts';
import type { RopeTables } from './rope.ts';
import type { DecoderSpec } from './specs.ts';

/** Names of the symbolic dimensions, as in the reference export. */
export const DIMS = {
  batch: 'batch_size',
  sequence: 'sequence_length',
  past: 'past_sequence_length',
  total: 'total_sequence_length',
} as const;

/** Additive mask value for disallowed (future or padded) keys. */
export const MASK_VALUE = -1e9;

/** Model-level metadata for the ModelProto header. */
export const ONNX_META = { irVersion: 8, opset: 17, producerName: 'jev-local scripts/models', producerVersion: '1' } as const;

/** The graph's input names, in order. */
export function familyInputNames(spec: { readonly numHiddenLayers: number }): string[] {
  const names = ['input_ids', 'attention_mask', 'position_ids'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
  return names;
}

/** The graph's output names, in order. */
export function familyOutputNames(spec: { readonly numHiddenLayers: number }): string[] {
  const names = ['logits'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`present.${i}.key`, `present.${i}.value`);
  return names;
}

/** What the graph reads of a spec: a family's, or a Llama spec read as one (llama-graph.ts). */
export type FamilyGraphSpec = Pick<
  FamilySpec,
  | 'name'
  | 'hiddenSize'
  | 'intermediateSize'
  | 'numHiddenLayers'
  | 'numAttentionHeads'
  | 'numKeyValueHeads'
  | 'headDim'
  | 'vocabSize'
  | 'rmsNormEps'
  | 'fused'
  | 'gemma'
  | 'slidingWindow'
  | 'slidingWindowPattern'
  | 'queryPreAttnScalar'
>;

/** The rotary tables, [positions, head_dim]: of every layer, and of Gemma's local layers where it has them. */
export interface RotaryTables {
  readonly global: RopeTables;
  readonly local?: RopeTables;
}

export function buildFamilyGraph(spec: FamilyGraphSpec, weights: FamilyWeights, rotary: RotaryTables, format: WeightFormat): GraphBuilder {
  const g = new GraphBuilder(`${spec.name}${format === 'fp32' ? '' : `-${format}`}`);
  const half = isHalfFormat(format);
  const ACT = activationType(format);
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const nRep = H / KV;
  const V = spec.vocabSize;
  const inter = spec.intermediateSize;

  // ---- inputs
  const { inputIds, attentionMask, positionIds } = decoderInputs(g, spec, ACT);

  // ---- helpers
  const scalarI64 = (v: number) => g.constInt64([v], []);
  const scalarF32 = (v: number) => g.constFloat([v], []);
  /** A scalar in the activation type. */
  const scalarAct = (v: number) => (half ? g.constFloat16([v], []) : scalarF32(v));
  /** A float initializer in the activation type (float16 bits for the half formats). */
  const actInit = activationInit(g, format);
  const linear = formatLinear(g, format);

  /** RMSNorm over the last axis (size dim); Gemma multiplies by (1 + w). */
  const rmsNorm = (x: string, w: Float32Array, dim: number, hfName: string, node: string): string => {
    let wName = actInit(hfName, [dim], w);
    if (spec.gemma) wName = g.op('Add', [wName, scalarAct(1)], `${node}/OnePlusWeight`);
    // half formats: the statistics in float32, as LlamaRMSNorm computes them under .half()
    const xf = half ? g.op('Cast', [x], `${node}/CastFloat`, { to: DataType.FLOAT }) : x;
    const sq = g.op('Mul', [xf, xf], `${node}/Pow`);
    const mean = g.op('ReduceMean', [sq], `${node}/ReduceMean`, { axes: [-1], keepdims: 1 });
    const plusEps = g.op('Add', [mean, scalarF32(spec.rmsNormEps)], `${node}/Add`);
    const rms = g.op('Sqrt', [plusEps], `${node}/Sqrt`);
    const normedF = g.op('Div', [xf, rms], `${node}/Div`);
    const normed = half ? g.op('Cast', [normedF], `${node}/CastHalf`, { to: DataType.FLOAT16 }) : normedF;
    return g.op('Mul', [normed, wName], `${node}/Mul`);
  };

  // ---- embeddings
  const embedName = actInit('model.embed_tokens.weight', [V, h], weights.embed);
  let hidden = g.op('Gather', [embedName, inputIds], '/model/embed_tokens/Gather', { axis: 0 });
  if (spec.gemma) hidden = g.op('Mul', [hidden, scalarAct(Math.fround(Math.sqrt(h)))], '/model/embed_tokens/Scale');

  // ---- rotary tables, gathered by position_ids → [B, 1, S, D]
  const ropeFor = (tables: RopeTables, tag: string) => {
    const rows = tables.cos.length / D;
    actInit(`model.rotary_emb${tag}.cos_table`, [rows, D], tables.cos);
    actInit(`model.rotary_emb${tag}.sin_table`, [rows, D], tables.sin);
    const axis1 = g.constInt64([1]);
    const c = g.op('Gather', [`model.rotary_emb${tag}.cos_table`, positionIds], `/model/rotary_emb${tag}/GatherCos`, { axis: 0 });
    const s = g.op('Gather', [`model.rotary_emb${tag}.sin_table`, positionIds], `/model/rotary_emb${tag}/GatherSin`, { axis: 0 });
    return {
      cos: g.op('Unsqueeze', [c, axis1], `/model/rotary_emb${tag}/UnsqueezeCos`),
      sin: g.op('Unsqueeze', [s, axis1], `/model/rotary_emb${tag}/UnsqueezeSin`),
    };
  };
  const anySliding = Array.from({ length: spec.numHiddenLayers }, (_, i) => isSlidingLayer(spec, i)).some(Boolean);
  if (anySliding !== (rotary.local !== undefined)) throw new Error(`${spec.name}: local rotary tables are needed exactly when some layer slides`);
  const globalRope = ropeFor(rotary.global, '');
  const localRope = rotary.local ? ropeFor(rotary.local, '_local') : globalRope;

  // ---- causal + padding (+ sliding window) masks → [B, 1, 1, S, T]
  const idxShape = g.op('Shape', [inputIds], '/model/mask/ShapeInputIds');
  const seqLen = g.op('Gather', [idxShape, scalarI64(1)], '/model/mask/SeqLen', { axis: 0 });
  const maskShape = g.op('Shape', [attentionMask], '/model/mask/ShapeMask');
  const totalLen = g.op('Gather', [maskShape, scalarI64(1)], '/model/mask/TotalLen', { axis: 0 });
  const pastLen = g.op('Sub', [totalLen, seqLen], '/model/mask/PastLen');
  const queryIdx = g.op('Range', [pastLen, totalLen, scalarI64(1)], '/model/mask/QueryRange');
  const queryCol = g.op('Unsqueeze', [queryIdx, g.constInt64([1])], '/model/mask/QueryCol'); // [S, 1]
  const keyIdx = g.op('Range', [scalarI64(0), totalLen, scalarI64(1)], '/model/mask/KeyRange');
  const keyRow = g.op('Unsqueeze', [keyIdx, g.constInt64([0])], '/model/mask/KeyRow'); // [1, T]
  const causal = g.op('LessOrEqual', [keyRow, queryCol], '/model/mask/Causal'); // [S, T]
  const keep = g.op('Cast', [attentionMask], '/model/mask/CastBool', { to: DataType.BOOL }); // [B, T]
  const keep5 = g.op('Unsqueeze', [keep, g.constInt64([1, 2, 3])], '/model/mask/Unsqueeze'); // [B,1,1,1,T]
  const allowed = g.op('And', [causal, keep5], '/model/mask/And'); // [B,1,1,S,T]
  // float32: an additive bias; float16: the allowed keys themselves, masked scores being replaced
  // (Where) by the float16 minimum in each layer
  const maskOf = (keys: string, node: string) => (half ? keys : g.op('Where', [keys, scalarF32(0), scalarF32(MASK_VALUE)], node));
  const globalMask = maskOf(allowed, '/model/mask/Where');
  let localMask = globalMask;
  if (anySliding) {
    const dist = g.op('Sub', [queryCol, keyRow], '/model/mask/Distance'); // [S, T]
    const inWindow = g.op('Less', [dist, scalarI64(spec.slidingWindow as number)], '/model/mask/InWindow');
    const both = g.op('And', [allowed, inWindow], '/model/mask/AndWindow');
    localMask = maskOf(both, '/model/mask/WhereWindow');
  }
  const applyMask = (scaled: string, mask: string, node: string): string =>
    half ? g.op('Where', [mask, scaled, scalarAct(-FLOAT16_MAX)], node) : g.op('Add', [scaled, mask], node);

  const halfD = D / 2;
  const rotate = (x: string, rope: { cos: string; sin: string }, node: string): string => {
    const axis3 = g.constInt64([3]);
    const x1 = g.op('Slice', [x, g.constInt64([0]), g.constInt64([halfD]), axis3], `${node}/Slice1`);
    const x2 = g.op('Slice', [x, g.constInt64([halfD]), g.constInt64([D]), axis3], `${node}/Slice2`);
    const negX2 = g.op('Neg', [x2], `${node}/Neg`);
    const rotated = g.op('Concat', [negX2, x1], `${node}/Concat`, { axis: 3 });
    const a = g.op('Mul', [x, rope.cos], `${node}/MulCos`);
    const b = g.op('Mul', [rotated, rope.sin], `${node}/MulSin`);
    return g.op('Add', [a, b], `${node}/Add`);
  };

  /** [B, S, heads·D] → [B, heads, S, D], with the per-head norm (Qwen3, Gemma 3) when given. */
  const splitHeads = (x: string, heads: number, node: string, norm?: { w: Float32Array; hfName: string }): string => {
    let r = g.op('Reshape', [x, g.constInt64([0, 0, heads, D])], `${node}/Reshape`);
    if (norm) r = rmsNorm(r, norm.w, D, norm.hfName, `${node}/norm`);
    return g.op('Transpose', [r], `${node}/Transpose`, { perm: [0, 2, 1, 3] });
  };

  /** A projection, with its bias (Qwen2) when the weights have one. */
  const project = (x: string, w: Float32Array, b: Float32Array | undefined, rows: number, cols: number, hfName: string, node: string): string => {
    const y = linear(x, w, rows, cols, `${hfName}.weight`, node);
    return b ? g.op('Add', [y, actInit(`${hfName}.bias`, [b.length], b)], `${node}/AddBias`) : y;
  };

  const scale = scalarAct(1 / Math.sqrt(spec.queryPreAttnScalar ?? D));
  const qDim = H * D;
  const kvDim = KV * D;

  // ---- decoder layers
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const w = weights.layers[i];
    if (!w) throw new Error(`missing weights for layer ${i}`);
    const hf = `model.layers.${i}`;
    const n = `/model/layers.${i}`;
    const local = isSlidingLayer(spec, i);
    const qNorm = w.qNorm && { w: w.qNorm, hfName: `${hf}.self_attn.q_norm.weight` };
    const kNorm = w.kNorm && { w: w.kNorm, hfName: `${hf}.self_attn.k_norm.weight` };

    const x = rmsNorm(hidden, w.inputNorm, h, `${hf}.input_layernorm.weight`, `${n}/input_layernorm`);
    let q: string;
    let k: string;
    let v: string;
    if (spec.fused) {
      const wqkv = concatColumns([{ data: w.q, cols: qDim }, { data: w.k, cols: kvDim }, { data: w.v, cols: kvDim }], h);
      const qkv = linear(x, wqkv, h, qDim + 2 * kvDim, `${hf}.self_attn.qkv_proj.weight`, `${n}/self_attn/qkv_proj`);
      const [qLin, kLin, vLin] = g.node('Split', [qkv, g.constInt64([qDim, kvDim, kvDim])], { name: `${n}/self_attn/SplitQKV`, attrs: { axis: -1 }, count: 3 }) as [string, string, string];
      q = splitHeads(qLin, H, `${n}/self_attn/q`, qNorm);
      k = splitHeads(kLin, KV, `${n}/self_attn/k`, kNorm);
      v = splitHeads(vLin, KV, `${n}/self_attn/v`);
    } else {
      q = splitHeads(project(x, w.q, w.qBias, h, qDim, `${hf}.self_attn.q_proj`, `${n}/self_attn/q_proj`), H, `${n}/self_attn/q`, qNorm);
      k = splitHeads(project(x, w.k, w.kBias, h, kvDim, `${hf}.self_attn.k_proj`, `${n}/self_attn/k_proj`), KV, `${n}/self_attn/k`, kNorm);
      v = splitHeads(project(x, w.v, w.vBias, h, kvDim, `${hf}.self_attn.v_proj`, `${n}/self_attn/v_proj`), KV, `${n}/self_attn/v`);
    }
    const rope = local ? localRope : globalRope;
    const qRot = rotate(q, rope, `${n}/self_attn/q_rotary`);
    const kRot = rotate(k, rope, `${n}/self_attn/k_rotary`);

    const presentKey = g.op('Concat', [`past_key_values.${i}.key`, kRot], `${n}/self_attn/ConcatKey`, { axis: 2 }, `present.${i}.key`);
    const presentValue = g.op('Concat', [`past_key_values.${i}.value`, v], `${n}/self_attn/ConcatValue`, { axis: 2 }, `present.${i}.value`);

    // grouped-query attention without materialising repeated K/V
    const q5 = g.op('Reshape', [qRot, g.constInt64([0, KV, nRep, -1, D])], `${n}/self_attn/GroupQueries`); // [B,KV,r,S,D]
    const k5 = g.op('Unsqueeze', [presentKey, g.constInt64([2])], `${n}/self_attn/UnsqueezeKey`); // [B,KV,1,T,D]
    const kT = g.op('Transpose', [k5], `${n}/self_attn/TransposeKey`, { perm: [0, 1, 2, 4, 3] }); // [B,KV,1,D,T]
    const scores = g.op('MatMul', [q5, kT], `${n}/self_attn/QK`); // [B,KV,r,S,T]
    const scaled = g.op('Mul', [scores, scale], `${n}/self_attn/Scale`);
    const masked = applyMask(scaled, local ? localMask : globalMask, `${n}/self_attn/Mask`);
    const probs = g.op('Softmax', [masked], `${n}/self_attn/Softmax`, { axis: -1 });
    const v5 = g.op('Unsqueeze', [presentValue, g.constInt64([2])], `${n}/self_attn/UnsqueezeValue`); // [B,KV,1,T,D]
    const ctx = g.op('MatMul', [probs, v5], `${n}/self_attn/PV`); // [B,KV,r,S,D]
    const ctx4 = g.op('Reshape', [ctx, g.constInt64([0, H, -1, D])], `${n}/self_attn/MergeGroups`); // [B,H,S,D]
    const ctxT = g.op('Transpose', [ctx4], `${n}/self_attn/TransposeOut`, { perm: [0, 2, 1, 3] }); // [B,S,H,D]
    const ctx3 = g.op('Reshape', [ctxT, g.constInt64([0, 0, qDim])], `${n}/self_attn/MergeHeads`); // [B,S,H*D]
    let attnOut = linear(ctx3, w.o, qDim, h, `${hf}.self_attn.o_proj.weight`, `${n}/self_attn/o_proj`);

    let x2: string;
    if (spec.gemma) {
      attnOut = rmsNorm(attnOut, w.postAttnNorm, h, `${hf}.post_attention_layernorm.weight`, `${n}/post_attention_layernorm`);
      hidden = g.op('Add', [hidden, attnOut], `${n}/AddAttention`);
      x2 = rmsNorm(hidden, w.preFfNorm as Float32Array, h, `${hf}.pre_feedforward_layernorm.weight`, `${n}/pre_feedforward_layernorm`);
    } else {
      hidden = g.op('Add', [hidden, attnOut], `${n}/AddAttention`);
      x2 = rmsNorm(hidden, w.postAttnNorm, h, `${hf}.post_attention_layernorm.weight`, `${n}/post_attention_layernorm`);
    }

    let gate: string;
    let up: string;
    if (spec.fused) {
      const wgu = concatColumns([{ data: w.gate, cols: inter }, { data: w.up, cols: inter }], h);
      const gu = linear(x2, wgu, h, 2 * inter, `${hf}.mlp.gate_up_proj.weight`, `${n}/mlp/gate_up_proj`);
      [gate, up] = g.node('Split', [gu, g.constInt64([inter, inter])], { name: `${n}/mlp/SplitGateUp`, attrs: { axis: -1 }, count: 2 }) as [string, string];
    } else {
      gate = linear(x2, w.gate, h, inter, `${hf}.mlp.gate_proj.weight`, `${n}/mlp/gate_proj`);
      up = linear(x2, w.up, h, inter, `${hf}.mlp.up_proj.weight`, `${n}/mlp/up_proj`);
    }
    let act: string;
    if (spec.gemma) {
      // gelu_pytorch_tanh: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))
      const x3 = g.op('Mul', [g.op('Mul', [gate, gate], `${n}/mlp/act/Sq`), gate], `${n}/mlp/act/Cube`);
      const inner = g.op('Add', [gate, g.op('Mul', [x3, scalarAct(0.044715)], `${n}/mlp/act/MulC`)], `${n}/mlp/act/Inner`);
      const th = g.op('Tanh', [g.op('Mul', [inner, scalarAct(Math.sqrt(2 / Math.PI))], `${n}/mlp/act/MulK`)], `${n}/mlp/act/Tanh`);
      const onePlus = g.op('Add', [th, scalarAct(1)], `${n}/mlp/act/OnePlus`);
      act = g.op('Mul', [g.op('Mul', [gate, onePlus], `${n}/mlp/act/MulX`), scalarAct(0.5)], `${n}/mlp/act/Half`);
    } else {
      act = g.op('Mul', [gate, g.op('Sigmoid', [gate], `${n}/mlp/act/Sigmoid`)], `${n}/mlp/act/Mul`);
    }
    const prod = g.op('Mul', [act, up], `${n}/mlp/Mul`);
    let mlpOut = linear(prod, w.down, inter, h, `${hf}.mlp.down_proj.weight`, `${n}/mlp/down_proj`);
    if (spec.gemma) mlpOut = rmsNorm(mlpOut, w.postFfNorm as Float32Array, h, `${hf}.post_feedforward_layernorm.weight`, `${n}/post_feedforward_layernorm`);
    hidden = g.op('Add', [hidden, mlpOut], `${n}/AddMlp`);
  }

  // ---- final norm + lm_head (tied: the embedding, read transposed)
  const normed = rmsNorm(hidden, weights.finalNorm, h, 'model.norm.weight', '/model/norm');
  logitsTail(g, spec, ACT, normed, idxShape, (flat) => {
    if (!weights.lmHead) return g.op('Gemm', [flat, embedName], '/lm_head/Gemm', { transB: 1 }); // [B*S, V]
    actInit('lm_head.weight.T', [h, V], weights.lmHead);
    return g.op('MatMul', [flat, 'lm_head.weight.T'], '/lm_head/MatMul');
  });
  return g;
}

/**
 * The graph's inputs, the same in this decoder and the GQA export (gqa-graph.ts), in the order
 * transformers.js feeds them: input_ids, attention_mask, position_ids, then each layer's past key
 * and value.
 */
export function decoderInputs(
  g: GraphBuilder,
  spec: Pick<DecoderSpec, 'numHiddenLayers' | 'numKeyValueHeads' | 'headDim'>,
  act: DataType,
): { inputIds: string; attentionMask: string; positionIds: string } {
  const { batch, sequence, past, total } = DIMS;
  const inputIds = g.input('input_ids', DataType.INT64, [batch, sequence]);
  const attentionMask = g.input('attention_mask', DataType.INT64, [batch, total]);
  const positionIds = g.input('position_ids', DataType.INT64, [batch, sequence]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.input(`past_key_values.${i}.key`, act, [batch, spec.numKeyValueHeads, past, spec.headDim]);
    g.input(`past_key_values.${i}.value`, act, [batch, spec.numKeyValueHeads, past, spec.headDim]);
  }
  return { inputIds, attentionMask, positionIds };
}

/**
 * The graph's last part, the same in this decoder and the GQA export (gqa-graph.ts): the final
 * norm's output flattened to [B·S, h], the lm_head (`head` of the flattened rows: a Gemm on the
 * tied embedding, or a MatMul), the logits reshaped to [B, S, V] by the input ids' shape
 * (`idxShape`), then the graph's outputs: logits and each layer's present key and value.
 */
export function logitsTail(
  g: GraphBuilder,
  spec: Pick<DecoderSpec, 'hiddenSize' | 'vocabSize' | 'numHiddenLayers' | 'numKeyValueHeads' | 'headDim'>,
  act: DataType,
  normed: string,
  idxShape: string,
  head: (flat: string) => string,
): void {
  const { batch, sequence, total } = DIMS;
  const V = spec.vocabSize;
  const flat = g.op('Reshape', [normed, g.constInt64([-1, spec.hiddenSize])], '/lm_head/Flatten'); // [B*S, h]
  const flatLogits = head(flat);
  const logitsShape = g.op('Concat', [idxShape, g.constInt64([V])], '/lm_head/Shape', { axis: 0 });
  g.op('Reshape', [flatLogits, logitsShape], '/lm_head/Reshape', undefined, 'logits');

  // ---- outputs
  g.output('logits', act, [batch, sequence, V]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.output(`present.${i}.key`, act, [batch, spec.numKeyValueHeads, total, spec.headDim]);
    g.output(`present.${i}.value`, act, [batch, spec.numKeyValueHeads, total, spec.headDim]);
  }
}
