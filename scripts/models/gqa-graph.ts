/**
 * The same Llama decoder in the style of onnxruntime-genai's model builder ("optimized w/ GQA"),
 * with the input and output names of the Optimum-style graph (llama-graph.ts) and of real genai
 * exports (past_key_values.N.key/value in, present.N.key/value out, KV cache BNSH):
 *
 *   embed      Gather(embed_tokens, input_ids)
 *   norms      SimplifiedLayerNormalization (ai.onnx domain contrib, stash_type 1) for the first
 *              input_layernorm; every later norm is com.microsoft SkipSimplifiedLayerNormalization,
 *              which also adds the residual (output 3 = input + skip is the new residual stream)
 *   q/k/v/o,   MatMul (fp32/fp16) or MatMulNBits (q4/q4f16), see linear-formats.ts
 *   gate/up/down
 *   rotary     com.microsoft RotaryEmbedding (rotate-half, interleaved 0) on q and k, fed by the
 *              graph's position_ids, with cos/sin caches [max_position, head_dim / 2]. (The builder
 *              can instead fold RoPE into GQA with do_rotary = 1, deriving positions from
 *              seqlens_k; the separate op is chosen here so that left-padded batches get the
 *              positions the caller gives, as in the Optimum-style graph.)
 *   attention  com.microsoft GroupQueryAttention(query, key, value, past_key, past_value,
 *              seqlens_k, total_sequence_length) with num_heads, kv_num_heads, scale = 1/sqrt(D),
 *              where, as the builder wires them,
 *                seqlens_k             = Cast<int32>(ReduceSum(attention_mask, axis 1) - 1)   [B]
 *                total_sequence_length = Cast<int32>(Shape(attention_mask)[1])                scalar
 *              GroupQueryAttention masks causally and by seqlens_k: a sequence's valid keys are
 *              its first seqlens_k + 1, so it handles right padding (and none), not the left
 *              padding the Optimum-style graph masks through attention_mask.
 *   lm_head    tied: Gemm(hidden, embed_tokens, transB 1), as in llama-graph.ts
 *
 * Formats: fp32, q4, fp16 and q4f16 (the half formats keep float16 activations, KV cache and
 * logits; SimplifiedLayerNormalization's statistics are float32 by stash_type).
 */
import { type WeightFormat, activationInit, activationType, formatLinear } from './linear-formats.ts';
import { decoderInputs, logitsTail } from './family-graph.ts';
import { DataType, GraphBuilder } from './onnx-graph.ts';
import type { RopeTables } from './rope.ts';
import type { ModelSpec } from './specs.ts';
import type { LlamaWeights } from './weights.ts';

export type GqaFormat = Exclude<WeightFormat, 'q8'>;
export const GQA_FORMATS: readonly GqaFormat[] = ['fp32', 'fp16', 'q4', 'q4f16'];

const MS = 'com.microsoft';

/** Opsets a GQA graph imports (ai.onnx 17 from ONNX_META, plus com.microsoft). */
export const GQA_OPSETS = [{ domain: MS, version: 1 }] as const;

/** The first `half` columns of a [rows, 2·half] rotate-half table: the caches RotaryEmbedding takes. */
function halfTable(table: Float32Array, rows: number, d: number): Float32Array {
  const half = d / 2;
  const out = new Float32Array(rows * half);
  for (let p = 0; p < rows; p++) out.set(table.subarray(p * d, p * d + half), p * half);
  return out;
}

/**
 * Where RoPE is applied: 'gqa' = inside GroupQueryAttention (do_rotary 1, positions from
 * seqlens_k, as the builder writes it for CPU/WebGPU), 'op' = separate RotaryEmbedding nodes fed
 * by position_ids.
 */
export type GqaRotary = 'gqa' | 'op';

export function buildGqaGraph(spec: ModelSpec, weights: LlamaWeights, rope: RopeTables, format: GqaFormat, rotaryMode: GqaRotary = 'op'): GraphBuilder {
  const g = new GraphBuilder(`${spec.name}-gqa${format === 'fp32' ? '' : `-${format}`}`);
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const V = spec.vocabSize;
  const ACT = activationType(format);
  const eps = { float: spec.rmsNormEps };

  const { inputIds, attentionMask, positionIds } = decoderInputs(g, spec, ACT);

  const actInit = activationInit(g, format);
  const linear = formatLinear(g, format);

  // ---- seqlens_k and total_sequence_length, as the builder derives them from attention_mask
  const maskSum = g.op('ReduceSum', [attentionMask, g.constInt64([1])], '/model/attn_mask_reformat/ReduceSum', { keepdims: 0 });
  const maskSub = g.op('Sub', [maskSum, g.constInt64([1], [])], '/model/attn_mask_reformat/Sub');
  const seqlensK = g.op('Cast', [maskSub], '/model/attn_mask_reformat/seqlens_k', { to: DataType.INT32 });
  const maskShape = g.op('Shape', [attentionMask], '/model/attn_mask_reformat/Shape');
  const totalLen = g.op('Gather', [maskShape, g.constInt64([1], [])], '/model/attn_mask_reformat/Gather', { axis: 0 });
  const totalSeqLen = g.op('Cast', [totalLen], '/model/attn_mask_reformat/total_seq_len', { to: DataType.INT32 });

  // ---- rotary caches [max_position, D / 2]
  const cosCache = actInit('cos_cache', [spec.maxPositionEmbeddings, D / 2], halfTable(rope.cos, spec.maxPositionEmbeddings, D));
  const sinCache = actInit('sin_cache', [spec.maxPositionEmbeddings, D / 2], halfTable(rope.sin, spec.maxPositionEmbeddings, D));
  const rotary = (x: string, heads: number, node: string): string => {
    const [out] = g.node('RotaryEmbedding', [x, positionIds, cosCache, sinCache], {
      name: node,
      domain: MS,
      attrs: { interleaved: 0, num_heads: heads },
    });
    return out as string;
  };

  const embedName = actInit('model.embed_tokens.weight', [V, h], weights.embed);
  let residual = g.op('Gather', [embedName, inputIds], '/model/embed_tokens/Gather', { axis: 0 });
  /** The pending sub-layer output not yet added to `residual` (undefined before layer 0). */
  let pending: string | undefined;

  /** Norm of (residual + pending); updates `residual` to that sum. */
  const norm = (w: Float32Array, hfName: string, node: string): string => {
    const gamma = actInit(hfName, [h], w);
    if (pending === undefined) {
      const [y] = g.node('SimplifiedLayerNormalization', [residual, gamma], {
        name: `${node}/SimplifiedLayerNorm`,
        attrs: { axis: -1, epsilon: eps, stash_type: 1 },
      });
      return y as string;
    }
    const outs = g.node('SkipSimplifiedLayerNormalization', [pending, residual, gamma], {
      name: `${node}/SkipLayerNorm`,
      domain: MS,
      attrs: { epsilon: eps },
      outputs: [`${node}/output_0`, '', '', `${node}/output_3`].map((o) => (o === '' ? o : g.fresh(o))),
    });
    residual = outs[3] as string;
    pending = undefined;
    return outs[0] as string;
  };

  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const w = weights.layers[i];
    if (!w) throw new Error(`missing weights for layer ${i}`);
    const hf = `model.layers.${i}`;
    const n = `/model/layers.${i}`;

    const x = norm(w.inputNorm, `${hf}.input_layernorm.weight`, `${n}/input_layernorm`);
    const q = linear(x, w.q, h, H * D, `${hf}.self_attn.q_proj.weight`, `${n}/attn/q_proj`);
    const k = linear(x, w.k, h, KV * D, `${hf}.self_attn.k_proj.weight`, `${n}/attn/k_proj`);
    const v = linear(x, w.v, h, KV * D, `${hf}.self_attn.v_proj.weight`, `${n}/attn/v_proj`);
    const inGqa = rotaryMode === 'gqa';
    const qRot = inGqa ? q : rotary(q, H, `${n}/attn/q_rotary/RotaryEmbedding`);
    const kRot = inGqa ? k : rotary(k, KV, `${n}/attn/k_rotary/RotaryEmbedding`);
    const [attn] = g.node(
      'GroupQueryAttention',
      [qRot, kRot, v, `past_key_values.${i}.key`, `past_key_values.${i}.value`, seqlensK, totalSeqLen, ...(inGqa ? [cosCache, sinCache] : [])],
      {
        name: `${n}/attn/GroupQueryAttention`,
        domain: MS,
        attrs: {
          num_heads: H,
          kv_num_heads: KV,
          scale: { float: 1 / Math.sqrt(D) },
          do_rotary: inGqa ? 1 : 0,
          rotary_interleaved: 0,
          local_window_size: -1,
        },
        outputs: [g.fresh(`${n}/attn/GroupQueryAttention/output_0`), `present.${i}.key`, `present.${i}.value`],
      },
    );
    pending = linear(attn as string, w.o, H * D, h, `${hf}.self_attn.o_proj.weight`, `${n}/attn/o_proj`);

    const x2 = norm(w.postNorm, `${hf}.post_attention_layernorm.weight`, `${n}/post_attention_layernorm`);
    const gate = linear(x2, w.gate, h, spec.intermediateSize, `${hf}.mlp.gate_proj.weight`, `${n}/mlp/gate_proj`);
    const up = linear(x2, w.up, h, spec.intermediateSize, `${hf}.mlp.up_proj.weight`, `${n}/mlp/up_proj`);
    const sig = g.op('Sigmoid', [gate], `${n}/mlp/act_fn/Sigmoid`);
    const silu = g.op('Mul', [gate, sig], `${n}/mlp/act_fn/Mul`);
    const prod = g.op('Mul', [silu, up], `${n}/mlp/Mul`);
    pending = linear(prod, w.down, spec.intermediateSize, h, `${hf}.mlp.down_proj.weight`, `${n}/mlp/down_proj`);
  }

  const normed = norm(weights.finalNorm, 'model.norm.weight', '/model/layers.final_norm');
  const idxShape = g.op('Shape', [inputIds], '/lm_head/ShapeInputIds');
  logitsTail(g, spec, ACT, normed, idxShape, (flat) => g.op('Gemm', [flat, embedName], '/lm_head/Gemm', { transB: 1 }));
  return g;
}
