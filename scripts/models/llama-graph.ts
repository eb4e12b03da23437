/**
 * The ONNX graph of a Llama decoder with KV cache, in the input/output layout transformers.js
 * expects (same names, dtypes and dim_params as an optimum export / the TinyStories export):
 *
 *   inputs   input_ids                 int64   [batch_size, sequence_length]
 *            attention_mask            int64   [batch_size, total_sequence_length]
 *            position_ids              int64   [batch_size, sequence_length]
 *            past_key_values.{i}.key   float32 [batch_size, kv_heads, past_sequence_length, head_dim]
 *            past_key_values.{i}.value float32 [batch_size, kv_heads, past_sequence_length, head_dim]
 *   outputs  logits                    float32 [batch_size, sequence_length, vocab]
 *            present.{i}.key           float32 [batch_size, kv_heads, total_sequence_length, head_dim]
 *            present.{i}.value         float32 [batch_size, kv_heads, total_sequence_length, head_dim]
 *
 * Only standard ai.onnx ops (opset 17), no contrib ops, so it runs on onnxruntime CPU, wasm and
 * webgpu. Semantics (Hugging Face LlamaForCausalLM):
 *   - RMSNorm: x / sqrt(mean(x²) + eps) * w
 *   - RoPE, rotate-half: x·cos + rotate_half(x)·sin, cos/sin rows gathered by position_ids
 *   - present = concat(past, new) on the sequence axis (keys stored after RoPE)
 *   - GQA: queries reshaped to [B, kv_heads, heads/kv_heads, S, D] and multiplied against the
 *     un-repeated keys/values (broadcast), equivalent to HF's repeat_kv
 *   - mask: query i (absolute index past_len + i) sees key j iff j <= past_len + i AND
 *     attention_mask[b, j] != 0; masked scores get -1e9 added (finite: no NaN on fully masked
 *     padding rows, which then attend uniformly and are ignored)
 *   - MLP: down(silu(gate(x)) * up(x)), silu(x) = x * sigmoid(x)
 *   - tied lm_head: Gemm(hidden, embed_tokens, transB = 1) — the embedding is stored once
 *
 * Formats (the hub's file per dtype, all from the same float32 weights; see FORMAT_NOTES):
 *   fp32   the reference (this file's fp32 path must stay byte-identical: other checks pin it)
 *   fp16   float16 weights, activations, KV cache and logits. As Hugging Face's LlamaRMSNorm does
 *          under .half(), each RMSNorm casts to float32 for x², mean, eps and 1/sqrt, and casts back
 *          before multiplying by its float16 weight; softmax runs in float16. Masked scores are set
 *          (Where) to -65504, the float16 minimum, instead of adding -1e9 (not finite in float16).
 *   q4     com.microsoft MatMulNBits (bits 4, block 32, float16-representable float32 scales,
 *          see quantize-q4.ts) for q/k/v/o and gate/up/down; float32 activations; embedding,
 *          tied lm_head, norms and RoPE tables float32 (as the hub's MatMul4BitsQuantizer leaves them).
 *   q4f16  the same nibbles and scales with float16 scales, activations, KV cache and logits;
 *          embedding / lm_head / RoPE tables float16 (the q4 model converted to float16).
 *   q8     onnxruntime quantize_dynamic (IntegerOps) as the hub's model_quantized.onnx: per
 *          projection, DynamicQuantizeLinear(x) → uint8 x, scale, zero point (shared by the
 *          projections that read the same x), MatMulInteger(x_q, W_int8, x_zp, W_zp) → int32, Cast
 *          to float32, Mul by x_scale · W_scale[col] (see quantize.ts); embedding float32.
 */
import { FLOAT16_MAX } from './float16.ts';
import { type WeightFormat, activationInit, activationType, formatLinear, isHalfFormat } from './linear-formats.ts';
import { DataType, GraphBuilder } from './onnx-graph.ts';
import type { RopeTables } from './rope.ts';
import type { ModelSpec } from './specs.ts';
import type { LlamaWeights } from './weights.ts';

export { type WeightFormat, WEIGHT_FORMATS, activationType, isHalfFormat } from './linear-formats.ts';

/** Names of the symbolic dimensions, as in the reference export. */
export const DIMS = {
  batch: 'batch_size',
  sequence: 'sequence_length',
  past: 'past_sequence_length',
  total: 'total_sequence_length',
} as const;

/** The graph's input names, in order. */
export function modelInputNames(spec: ModelSpec): string[] {
  const names = ['input_ids', 'attention_mask', 'position_ids'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
  return names;
}

/** The graph's output names, in order. */
export function modelOutputNames(spec: ModelSpec): string[] {
  const names = ['logits'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`present.${i}.key`, `present.${i}.value`);
  return names;
}

/** Additive mask value for disallowed (future or padded) keys. */
export const MASK_VALUE = -1e9;

export function buildLlamaGraph(spec: ModelSpec, weights: LlamaWeights, rope: RopeTables, format: WeightFormat): GraphBuilder {
  const g = new GraphBuilder(`${spec.name}${format === 'fp32' ? '' : `-${format}`}`);
  const half = isHalfFormat(format);
  const ACT = activationType(format);
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const nRep = H / KV;
  const V = spec.vocabSize;
  const { batch, sequence, past, total } = DIMS;

  // ---- inputs
  const inputIds = g.input('input_ids', DataType.INT64, [batch, sequence]);
  const attentionMask = g.input('attention_mask', DataType.INT64, [batch, total]);
  const positionIds = g.input('position_ids', DataType.INT64, [batch, sequence]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.input(`past_key_values.${i}.key`, ACT, [batch, KV, past, D]);
    g.input(`past_key_values.${i}.value`, ACT, [batch, KV, past, D]);
  }

  // ---- helpers
  const scalarI64 = (v: number) => g.constInt64([v], []);
  const scalarF32 = (v: number) => g.constFloat([v], []);
  /** A scalar in the activation type. */
  const scalarAct = (v: number) => (half ? g.constFloat16([v], []) : scalarF32(v));
  /** A float initializer in the activation type (float16 bits for the half formats). */
  const actInit = activationInit(g, format);

  const linear = formatLinear(g, format);

  const rmsNorm = (x: string, w: Float32Array, hfName: string, node: string): string => {
    const wName = actInit(hfName, [h], w);
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

  // ---- rotary tables, gathered by position_ids → [B, 1, S, D]
  actInit('model.rotary_emb.cos_table', [spec.maxPositionEmbeddings, D], rope.cos);
  actInit('model.rotary_emb.sin_table', [spec.maxPositionEmbeddings, D], rope.sin);
  const axis1 = g.constInt64([1]);
  const cosRows = g.op('Gather', ['model.rotary_emb.cos_table', positionIds], '/model/rotary_emb/GatherCos', { axis: 0 });
  const sinRows = g.op('Gather', ['model.rotary_emb.sin_table', positionIds], '/model/rotary_emb/GatherSin', { axis: 0 });
  const cos = g.op('Unsqueeze', [cosRows, axis1], '/model/rotary_emb/UnsqueezeCos');
  const sin = g.op('Unsqueeze', [sinRows, axis1], '/model/rotary_emb/UnsqueezeSin');

  // ---- causal + padding mask → additive bias [B, 1, 1, S, T]
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
  // float32: an additive bias; float16: masked scores are replaced (Where) by the float16 minimum
  const maskBias = half ? '' : g.op('Where', [allowed, scalarF32(0), scalarF32(MASK_VALUE)], '/model/mask/Where');
  const applyMask = (scaled: string, node: string): string =>
    half ? g.op('Where', [allowed, scaled, scalarAct(-FLOAT16_MAX)], node) : g.op('Add', [scaled, maskBias], node);

  const halfD = D / 2;
  const rotary = (x: string, node: string): string => {
    const axis3 = g.constInt64([3]);
    const x1 = g.op('Slice', [x, g.constInt64([0]), g.constInt64([halfD]), axis3], `${node}/Slice1`);
    const x2 = g.op('Slice', [x, g.constInt64([halfD]), g.constInt64([D]), axis3], `${node}/Slice2`);
    const negX2 = g.op('Neg', [x2], `${node}/Neg`);
    const rotated = g.op('Concat', [negX2, x1], `${node}/Concat`, { axis: 3 });
    const a = g.op('Mul', [x, cos], `${node}/MulCos`);
    const b = g.op('Mul', [rotated, sin], `${node}/MulSin`);
    return g.op('Add', [a, b], `${node}/Add`);
  };

  const splitHeads = (x: string, heads: number, node: string): string => {
    const r = g.op('Reshape', [x, g.constInt64([0, 0, heads, D])], `${node}/Reshape`);
    return g.op('Transpose', [r], `${node}/Transpose`, { perm: [0, 2, 1, 3] }); // [B, heads, S, D]
  };

  const scale = scalarAct(1 / Math.sqrt(D));

  // ---- decoder layers
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const w = weights.layers[i];
    if (!w) throw new Error(`missing weights for layer ${i}`);
    const hf = `model.layers.${i}`;
    const n = `/model/layers.${i}`;

    const x = rmsNorm(hidden, w.inputNorm, `${hf}.input_layernorm.weight`, `${n}/input_layernorm`);
    const q = splitHeads(linear(x, w.q, h, H * D, `${hf}.self_attn.q_proj.weight`, `${n}/self_attn/q_proj`), H, `${n}/self_attn/q`);
    const k = splitHeads(linear(x, w.k, h, KV * D, `${hf}.self_attn.k_proj.weight`, `${n}/self_attn/k_proj`), KV, `${n}/self_attn/k`);
    const v = splitHeads(linear(x, w.v, h, KV * D, `${hf}.self_attn.v_proj.weight`, `${n}/self_attn/v_proj`), KV, `${n}/self_attn/v`);
    const qRot = rotary(q, `${n}/self_attn/q_rotary`);
    const kRot = rotary(k, `${n}/self_attn/k_rotary`);

    const presentKey = g.op('Concat', [`past_key_values.${i}.key`, kRot], `${n}/self_attn/ConcatKey`, { axis: 2 }, `present.${i}.key`);
    const presentValue = g.op('Concat', [`past_key_values.${i}.value`, v], `${n}/self_attn/ConcatValue`, { axis: 2 }, `present.${i}.value`);

    // grouped-query attention without materialising repeated K/V
    const q5 = g.op('Reshape', [qRot, g.constInt64([0, KV, nRep, -1, D])], `${n}/self_attn/GroupQueries`); // [B,KV,r,S,D]
    const k5 = g.op('Unsqueeze', [presentKey, g.constInt64([2])], `${n}/self_attn/UnsqueezeKey`); // [B,KV,1,T,D]
    const kT = g.op('Transpose', [k5], `${n}/self_attn/TransposeKey`, { perm: [0, 1, 2, 4, 3] }); // [B,KV,1,D,T]
    const scores = g.op('MatMul', [q5, kT], `${n}/self_attn/QK`); // [B,KV,r,S,T]
    const scaled = g.op('Mul', [scores, scale], `${n}/self_attn/Scale`);
    const masked = applyMask(scaled, `${n}/self_attn/Mask`);
    const probs = g.op('Softmax', [masked], `${n}/self_attn/Softmax`, { axis: -1 });
    const v5 = g.op('Unsqueeze', [presentValue, g.constInt64([2])], `${n}/self_attn/UnsqueezeValue`); // [B,KV,1,T,D]
    const ctx = g.op('MatMul', [probs, v5], `${n}/self_attn/PV`); // [B,KV,r,S,D]
    const ctx4 = g.op('Reshape', [ctx, g.constInt64([0, H, -1, D])], `${n}/self_attn/MergeGroups`); // [B,H,S,D]
    const ctxT = g.op('Transpose', [ctx4], `${n}/self_attn/TransposeOut`, { perm: [0, 2, 1, 3] }); // [B,S,H,D]
    const ctx3 = g.op('Reshape', [ctxT, g.constInt64([0, 0, H * D])], `${n}/self_attn/MergeHeads`); // [B,S,H*D]
    const attnOut = linear(ctx3, w.o, H * D, h, `${hf}.self_attn.o_proj.weight`, `${n}/self_attn/o_proj`);
    hidden = g.op('Add', [hidden, attnOut], `${n}/AddAttention`);

    const x2 = rmsNorm(hidden, w.postNorm, `${hf}.post_attention_layernorm.weight`, `${n}/post_attention_layernorm`);
    const gate = linear(x2, w.gate, h, spec.intermediateSize, `${hf}.mlp.gate_proj.weight`, `${n}/mlp/gate_proj`);
    const up = linear(x2, w.up, h, spec.intermediateSize, `${hf}.mlp.up_proj.weight`, `${n}/mlp/up_proj`);
    const sig = g.op('Sigmoid', [gate], `${n}/mlp/act/Sigmoid`);
    const silu = g.op('Mul', [gate, sig], `${n}/mlp/act/Mul`);
    const prod = g.op('Mul', [silu, up], `${n}/mlp/Mul`);
    const down = linear(prod, w.down, spec.intermediateSize, h, `${hf}.mlp.down_proj.weight`, `${n}/mlp/down_proj`);
    hidden = g.op('Add', [hidden, down], `${n}/AddMlp`);
  }

  // ---- final norm + tied lm_head
  const normed = rmsNorm(hidden, weights.finalNorm, 'model.norm.weight', '/model/norm');
  const flat = g.op('Reshape', [normed, g.constInt64([-1, h])], '/lm_head/Flatten'); // [B*S, h]
  const flatLogits = g.op('Gemm', [flat, embedName], '/lm_head/Gemm', { transB: 1 }); // [B*S, V]
  const logitsShape = g.op('Concat', [idxShape, g.constInt64([V])], '/lm_head/Shape', { axis: 0 });
  g.op('Reshape', [flatLogits, logitsShape], '/lm_head/Reshape', undefined, 'logits');

  // ---- outputs
  g.output('logits', ACT, [batch, sequence, V]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.output(`present.${i}.key`, ACT, [batch, KV, total, D]);
    g.output(`present.${i}.value`, ACT, [batch, KV, total, D]);
  }
  return g;
}

/** Model-level metadata for the ModelProto header. */
export const ONNX_META = { irVersion: 8, opset: 17, producerName: 'jev-local scripts/models', producerVersion: '1' } as const;
