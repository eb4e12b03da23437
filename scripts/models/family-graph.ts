/**
 * The ONNX graph of a family model (families.ts) with KV cache, with the same inputs and outputs
 * as the Llama graph (llama-graph.ts: input_ids, attention_mask, position_ids,
 * past_key_values.N.key/value → logits, present.N.key/value), so transformers.js loads it the
 * same way. What differs per family (Hugging Face semantics):
 *   - Qwen2: q/k/v projections add a bias.
 *   - Qwen3 / Gemma 3: RMSNorm over head_dim of every query and key head (q_norm, k_norm), before
 *     RoPE; head_dim independent of hidden / heads.
 *   - Phi-3: one qkv_proj MatMul split into q, k, v; one gate_up_proj MatMul split into gate, up;
 *     untied lm_head.
 *   - Llama 3.2 / Phi-3.5: scaled rotary tables (family-rope.ts).
 *   - Gemma 3: embeddings × sqrt(hidden); RMSNorm multiplies by (1 + w); per layer
 *     h += post_attention_norm(attn(input_norm(h))); h += post_feedforward_norm(mlp(pre_feedforward_norm(h)));
 *     MLP down(gelu_tanh(gate) · up); attention scale query_pre_attn_scalar^-0.5; local layers
 *     (sliding window: key j seen by query i iff i - j < sliding_window) use the local rope theta.
 * Formats: 'fp32'; 'q4': every projection is com.microsoft MatMulNBits (4 bits, block 32, see
 * quantize-q4.ts); embedding, lm_head, norms and biases stay float32.
 */
import { concatColumns, type FamilyWeights } from './family-weights.ts';
import { familyRopeTables } from './family-rope.ts';
import { type FamilySpec, isSlidingLayer } from './families.ts';
import { DIMS, MASK_VALUE } from './llama-graph.ts';
import { DataType, GraphBuilder } from './onnx-graph.ts';
import { Q4_BLOCK, quantizeQ4 } from './quantize-q4.ts';

export type FamilyFormat = 'fp32' | 'q4';

export const FAMILY_ONNX_FILES: Record<FamilyFormat, string> = { fp32: 'onnx/model.onnx', q4: 'onnx/model_q4.onnx' };

export function familyInputNames(spec: FamilySpec): string[] {
  const names = ['input_ids', 'attention_mask', 'position_ids'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
  return names;
}

export function familyOutputNames(spec: FamilySpec): string[] {
  const names = ['logits'];
  for (let i = 0; i < spec.numHiddenLayers; i++) names.push(`present.${i}.key`, `present.${i}.value`);
  return names;
}

export function buildFamilyGraph(spec: FamilySpec, weights: FamilyWeights, format: FamilyFormat): GraphBuilder {
  const g = new GraphBuilder(`${spec.name}${format === 'q4' ? '-q4' : ''}`);
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const nRep = H / KV;
  const V = spec.vocabSize;
  const inter = spec.intermediateSize;
  const { batch, sequence, past, total } = DIMS;

  const inputIds = g.input('input_ids', DataType.INT64, [batch, sequence]);
  const attentionMask = g.input('attention_mask', DataType.INT64, [batch, total]);
  const positionIds = g.input('position_ids', DataType.INT64, [batch, sequence]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.input(`past_key_values.${i}.key`, DataType.FLOAT, [batch, KV, past, D]);
    g.input(`past_key_values.${i}.value`, DataType.FLOAT, [batch, KV, past, D]);
  }

  const scalarI64 = (v: number) => g.constInt64([v], []);
  const scalarF32 = (v: number) => g.constFloat([v], []);

  const linear = (x: string, w: Float32Array, rows: number, cols: number, hfName: string, node: string): string => {
    if (format === 'fp32' || rows % Q4_BLOCK !== 0) {
      g.floatInit(`${hfName}.T`, [rows, cols], w);
      return g.op('MatMul', [x, `${hfName}.T`], `${node}/MatMul`);
    }
    const q = quantizeQ4(w, rows, cols);
    g.initializer(`${hfName}.q4`, DataType.UINT8, [cols, rows / Q4_BLOCK, Q4_BLOCK / 2], q.packed);
    g.floatInit(`${hfName}.scales`, [q.scales.length], q.scales);
    const [out] = g.node('MatMulNBits', [x, `${hfName}.q4`, `${hfName}.scales`], {
      name: `${node}/MatMulNBits`,
      domain: 'com.microsoft',
      attrs: { K: rows, N: cols, bits: 4, block_size: Q4_BLOCK },
    });
    return out as string;
  };

  /** RMSNorm over the last axis (size dim); Gemma multiplies by (1 + w). */
  const rmsNorm = (x: string, w: Float32Array, dim: number, hfName: string, node: string): string => {
    let wName = g.floatInit(hfName, [dim], w);
    if (spec.gemma) wName = g.op('Add', [wName, scalarF32(1)], `${node}/OnePlusWeight`);
    const sq = g.op('Mul', [x, x], `${node}/Pow`);
    const mean = g.op('ReduceMean', [sq], `${node}/ReduceMean`, { axes: [-1], keepdims: 1 });
    const plusEps = g.op('Add', [mean, scalarF32(spec.rmsNormEps)], `${node}/Add`);
    const rms = g.op('Sqrt', [plusEps], `${node}/Sqrt`);
    const normed = g.op('Div', [x, rms], `${node}/Div`);
    return g.op('Mul', [normed, wName], `${node}/Mul`);
  };

  // ---- embeddings
  const embedName = g.floatInit('model.embed_tokens.weight', [V, h], weights.embed);
  let hidden = g.op('Gather', [embedName, inputIds], '/model/embed_tokens/Gather', { axis: 0 });
  if (spec.gemma) hidden = g.op('Mul', [hidden, scalarF32(Math.fround(Math.sqrt(h)))], '/model/embed_tokens/Scale');

  // ---- rotary tables → [B, 1, S, D]
  const axis1 = g.constInt64([1]);
  const ropeFor = (theta: number, local: boolean, tag: string) => {
    const t = familyRopeTables(spec, theta, local);
    g.floatInit(`model.rotary_emb${tag}.cos_table`, [spec.ropeRows, D], t.cos);
    g.floatInit(`model.rotary_emb${tag}.sin_table`, [spec.ropeRows, D], t.sin);
    const c = g.op('Gather', [`model.rotary_emb${tag}.cos_table`, positionIds], `/model/rotary_emb${tag}/GatherCos`, { axis: 0 });
    const s = g.op('Gather', [`model.rotary_emb${tag}.sin_table`, positionIds], `/model/rotary_emb${tag}/GatherSin`, { axis: 0 });
    return {
      cos: g.op('Unsqueeze', [c, axis1], `/model/rotary_emb${tag}/UnsqueezeCos`),
      sin: g.op('Unsqueeze', [s, axis1], `/model/rotary_emb${tag}/UnsqueezeSin`),
    };
  };
  const globalRope = ropeFor(spec.ropeTheta, false, '');
  const anySliding = Array.from({ length: spec.numHiddenLayers }, (_, i) => isSlidingLayer(spec, i)).some(Boolean);
  const localRope = anySliding ? ropeFor(spec.ropeLocalTheta ?? spec.ropeTheta, true, '_local') : globalRope;

  // ---- causal + padding (+ sliding window) masks → additive bias [B, 1, 1, S, T]
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
  const keep = g.op('Cast', [attentionMask], '/model/mask/CastBool', { to: DataType.BOOL });
  const keep5 = g.op('Unsqueeze', [keep, g.constInt64([1, 2, 3])], '/model/mask/Unsqueeze'); // [B,1,1,1,T]
  const allowed = g.op('And', [causal, keep5], '/model/mask/And');
  const globalMask = g.op('Where', [allowed, scalarF32(0), scalarF32(MASK_VALUE)], '/model/mask/Where');
  let localMask = globalMask;
  if (anySliding) {
    const dist = g.op('Sub', [queryCol, keyRow], '/model/mask/Distance'); // [S, T]
    const inWindow = g.op('Less', [dist, scalarI64(spec.slidingWindow as number)], '/model/mask/InWindow');
    const both = g.op('And', [allowed, inWindow], '/model/mask/AndWindow');
    localMask = g.op('Where', [both, scalarF32(0), scalarF32(MASK_VALUE)], '/model/mask/WhereWindow');
  }

  const half = D / 2;
  const rotary = (x: string, cos: string, sin: string, node: string): string => {
    const axis3 = g.constInt64([3]);
    const x1 = g.op('Slice', [x, g.constInt64([0]), g.constInt64([half]), axis3], `${node}/Slice1`);
    const x2 = g.op('Slice', [x, g.constInt64([half]), g.constInt64([D]), axis3], `${node}/Slice2`);
    const negX2 = g.op('Neg', [x2], `${node}/Neg`);
    const rotated = g.op('Concat', [negX2, x1], `${node}/Concat`, { axis: 3 });
    const a = g.op('Mul', [x, cos], `${node}/MulCos`);
    const b = g.op('Mul', [rotated, sin], `${node}/MulSin`);
    return g.op('Add', [a, b], `${node}/Add`);
  };

  /** [B, S, heads·D] → [B, heads, S, D], with the per-head norm (Qwen3, Gemma 3) when given. */
  const splitHeads = (x: string, heads: number, node: string, norm?: { w: Float32Array; hfName: string }): string => {
    let r = g.op('Reshape', [x, g.constInt64([0, 0, heads, D])], `${node}/Reshape`);
    if (norm) r = rmsNorm(r, norm.w, D, norm.hfName, `${node}/norm`);
    return g.op('Transpose', [r], `${node}/Transpose`, { perm: [0, 2, 1, 3] });
  };

  const addBias = (x: string, b: Float32Array | undefined, hfName: string, node: string): string =>
    b ? g.op('Add', [x, g.floatInit(hfName, [b.length], b)], `${node}/AddBias`) : x;

  const scale = scalarF32(1 / Math.sqrt(spec.gemma ? (spec.queryPreAttnScalar as number) : D));
  const qDim = H * D;
  const kvDim = KV * D;

  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const w = weights.layers[i];
    if (!w) throw new Error(`missing weights for layer ${i}`);
    const hf = `model.layers.${i}`;
    const n = `/model/layers.${i}`;
    const local = isSlidingLayer(spec, i);
    const rope = local ? localRope : globalRope;
    const mask = local ? localMask : globalMask;

    const x = rmsNorm(hidden, w.inputNorm, h, `${hf}.input_layernorm.weight`, `${n}/input_layernorm`);
    let qLin: string;
    let kLin: string;
    let vLin: string;
    if (spec.fused) {
      const wqkv = concatColumns([{ data: w.q, cols: qDim }, { data: w.k, cols: kvDim }, { data: w.v, cols: kvDim }], h);
      const qkv = linear(x, wqkv, h, qDim + 2 * kvDim, `${hf}.self_attn.qkv_proj.weight`, `${n}/self_attn/qkv_proj`);
      [qLin, kLin, vLin] = g.node('Split', [qkv, g.constInt64([qDim, kvDim, kvDim])], {
        name: `${n}/self_attn/SplitQKV`,
        attrs: { axis: -1 },
        count: 3,
      }) as [string, string, string];
    } else {
      qLin = addBias(linear(x, w.q, h, qDim, `${hf}.self_attn.q_proj.weight`, `${n}/self_attn/q_proj`), w.qBias, `${hf}.self_attn.q_proj.bias`, `${n}/self_attn/q_proj`);
      kLin = addBias(linear(x, w.k, h, kvDim, `${hf}.self_attn.k_proj.weight`, `${n}/self_attn/k_proj`), w.kBias, `${hf}.self_attn.k_proj.bias`, `${n}/self_attn/k_proj`);
      vLin = addBias(linear(x, w.v, h, kvDim, `${hf}.self_attn.v_proj.weight`, `${n}/self_attn/v_proj`), w.vBias, `${hf}.self_attn.v_proj.bias`, `${n}/self_attn/v_proj`);
    }
    const q = splitHeads(qLin, H, `${n}/self_attn/q`, w.qNorm && { w: w.qNorm, hfName: `${hf}.self_attn.q_norm.weight` });
    const k = splitHeads(kLin, KV, `${n}/self_attn/k`, w.kNorm && { w: w.kNorm, hfName: `${hf}.self_attn.k_norm.weight` });
    const v = splitHeads(vLin, KV, `${n}/self_attn/v`);
    const qRot = rotary(q, rope.cos, rope.sin, `${n}/self_attn/q_rotary`);
    const kRot = rotary(k, rope.cos, rope.sin, `${n}/self_attn/k_rotary`);

    const presentKey = g.op('Concat', [`past_key_values.${i}.key`, kRot], `${n}/self_attn/ConcatKey`, { axis: 2 }, `present.${i}.key`);
    const presentValue = g.op('Concat', [`past_key_values.${i}.value`, v], `${n}/self_attn/ConcatValue`, { axis: 2 }, `present.${i}.value`);

    const q5 = g.op('Reshape', [qRot, g.constInt64([0, KV, nRep, -1, D])], `${n}/self_attn/GroupQueries`);
    const k5 = g.op('Unsqueeze', [presentKey, g.constInt64([2])], `${n}/self_attn/UnsqueezeKey`);
    const kT = g.op('Transpose', [k5], `${n}/self_attn/TransposeKey`, { perm: [0, 1, 2, 4, 3] });
    const scores = g.op('MatMul', [q5, kT], `${n}/self_attn/QK`);
    const scaled = g.op('Mul', [scores, scale], `${n}/self_attn/Scale`);
    const masked = g.op('Add', [scaled, mask], `${n}/self_attn/Mask`);
    const probs = g.op('Softmax', [masked], `${n}/self_attn/Softmax`, { axis: -1 });
    const v5 = g.op('Unsqueeze', [presentValue, g.constInt64([2])], `${n}/self_attn/UnsqueezeValue`);
    const ctx = g.op('MatMul', [probs, v5], `${n}/self_attn/PV`);
    const ctx4 = g.op('Reshape', [ctx, g.constInt64([0, H, -1, D])], `${n}/self_attn/MergeGroups`);
    const ctxT = g.op('Transpose', [ctx4], `${n}/self_attn/TransposeOut`, { perm: [0, 2, 1, 3] });
    const ctx3 = g.op('Reshape', [ctxT, g.constInt64([0, 0, qDim])], `${n}/self_attn/MergeHeads`);
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
      const inner = g.op('Add', [gate, g.op('Mul', [x3, scalarF32(0.044715)], `${n}/mlp/act/MulC`)], `${n}/mlp/act/Inner`);
      const th = g.op('Tanh', [g.op('Mul', [inner, scalarF32(Math.sqrt(2 / Math.PI))], `${n}/mlp/act/MulK`)], `${n}/mlp/act/Tanh`);
      const onePlus = g.op('Add', [th, scalarF32(1)], `${n}/mlp/act/OnePlus`);
      act = g.op('Mul', [g.op('Mul', [gate, onePlus], `${n}/mlp/act/MulX`), scalarF32(0.5)], `${n}/mlp/act/Half`);
    } else {
      act = g.op('Mul', [gate, g.op('Sigmoid', [gate], `${n}/mlp/act/Sigmoid`)], `${n}/mlp/act/Mul`);
    }
    const prod = g.op('Mul', [act, up], `${n}/mlp/Mul`);
    let mlpOut = linear(prod, w.down, inter, h, `${hf}.mlp.down_proj.weight`, `${n}/mlp/down_proj`);
    if (spec.gemma) mlpOut = rmsNorm(mlpOut, w.postFfNorm as Float32Array, h, `${hf}.post_feedforward_layernorm.weight`, `${n}/post_feedforward_layernorm`);
    hidden = g.op('Add', [hidden, mlpOut], `${n}/AddMlp`);
  }

  const normed = rmsNorm(hidden, weights.finalNorm, h, 'model.norm.weight', '/model/norm');
  const flat = g.op('Reshape', [normed, g.constInt64([-1, h])], '/lm_head/Flatten');
  let flatLogits: string;
  if (weights.lmHead) {
    g.floatInit('lm_head.weight.T', [h, V], weights.lmHead);
    flatLogits = g.op('MatMul', [flat, 'lm_head.weight.T'], '/lm_head/MatMul');
  } else {
    flatLogits = g.op('Gemm', [flat, embedName], '/lm_head/Gemm', { transB: 1 });
  }
  const logitsShape = g.op('Concat', [idxShape, g.constInt64([V])], '/lm_head/Shape', { axis: 0 });
  g.op('Reshape', [flatLogits, logitsShape], '/lm_head/Reshape', undefined, 'logits');

  g.output('logits', DataType.FLOAT, [batch, sequence, V]);
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    g.output(`present.${i}.key`, DataType.FLOAT, [batch, KV, total, D]);
    g.output(`present.${i}.value`, DataType.FLOAT, [batch, KV, total, D]);
  }
  return g;
}

/** Opset imports of a family graph (com.microsoft for q4's MatMulNBits). */
export function familyOpsets(format: FamilyFormat): { domain: string; version: number }[] {
  return format === 'q4' ? [{ domain: 'com.microsoft', version: 1 }] : [];
}
