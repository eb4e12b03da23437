/**
 * Deterministic random weights for a Llama test model.
 *
 * Matrices are stored the way the ONNX graph multiplies them, `y = x @ W` with W row-major
 * [in, out] — i.e. the TRANSPOSE of the Hugging Face `nn.Linear.weight` ([out, in]). Each tensor
 * has its own random stream derived from (spec.seed, Hugging Face tensor name), so any tensor can
 * be regenerated alone and the order of generation does not matter.
 *
 * Scaling (std of the approximately normal entries):
 *   embed              σe = embedLogitStd / sqrt(hidden)
 *                      → after the final RMSNorm the hidden state has norm ≈ sqrt(hidden), so
 *                        each tied-lm_head logit has std ≈ embedLogitStd.
 *   q, k               qkGain / sqrt(hidden)     (attention scores of order 1, not flat)
 *   v, gate, up        1 / sqrt(fan_in)          (unit-scale activations)
 *   o, down            residualGain · σe / sqrt(fan_in) · c, with c compensating the typical
 *                      activation RMS feeding them, so that each layer adds ≈ residualGain · σe per
 *                      element to the residual stream. With the stream dominated by the layers'
 *                      output rather than by the input token's own embedding, the tied lm_head
 *                      does not just echo the last input token.
 *   norms              1 + normNoise · N(0, 1)
 */
import { rngFor } from './prng.ts';
import type { ModelSpec } from './specs.ts';

/** One decoder layer; matrix shapes are [in, out] (HF weight transposed). */
export interface LayerWeights {
  /** input_layernorm.weight [hidden] */
  readonly inputNorm: Float32Array;
  /** self_attn.q_proj [hidden, heads * headDim] */
  readonly q: Float32Array;
  /** self_attn.k_proj [hidden, kvHeads * headDim] */
  readonly k: Float32Array;
  /** self_attn.v_proj [hidden, kvHeads * headDim] */
  readonly v: Float32Array;
  /** self_attn.o_proj [heads * headDim, hidden] */
  readonly o: Float32Array;
  /** post_attention_layernorm.weight [hidden] */
  readonly postNorm: Float32Array;
  /** mlp.gate_proj [hidden, intermediate] */
  readonly gate: Float32Array;
  /** mlp.up_proj [hidden, intermediate] */
  readonly up: Float32Array;
  /** mlp.down_proj [intermediate, hidden] */
  readonly down: Float32Array;
}

export interface LlamaWeights {
  /** model.embed_tokens.weight [vocab, hidden], also the tied lm_head. */
  readonly embed: Float32Array;
  readonly layers: readonly LayerWeights[];
  /** model.norm.weight [hidden] */
  readonly finalNorm: Float32Array;
}

/** RMS of silu(g) * u for g, u ~ N(0, 1): sqrt(E[silu(g)^2]) ≈ 0.60. */
const MLP_ACT_RMS = 0.6;
/** Typical RMS of an attention output (a convex mix of unit-scale value vectors). */
const ATTN_OUT_RMS = 0.6;

/** Standard deviations used for every tensor kind (exported for documentation/tests). */
export function weightScales(spec: ModelSpec) {
  const h = spec.hiddenSize;
  const embed = spec.init.embedLogitStd / Math.sqrt(h);
  const attnIn = spec.numAttentionHeads * spec.headDim;
  return {
    embed,
    qk: spec.init.qkGain / Math.sqrt(h),
    v: 1 / Math.sqrt(h),
    o: (spec.init.residualGain * embed) / Math.sqrt(attnIn) / ATTN_OUT_RMS,
    gateUp: 1 / Math.sqrt(h),
    down: (spec.init.residualGain * embed) / Math.sqrt(spec.intermediateSize) / MLP_ACT_RMS,
    normNoise: spec.init.normNoise,
  };
}

/** Generates one tensor by Hugging Face name: `size` entries of mean + std·N(0,1). */
export function randomTensor(spec: ModelSpec, hfName: string, size: number, std: number, mean = 0): Float32Array {
  const out = new Float32Array(size);
  rngFor(spec.seed, hfName).fillNormal(out, std, mean);
  return out;
}

/** Generates all weights of `spec` (≈ 4 bytes per parameter of memory). */
export function generateWeights(spec: ModelSpec): LlamaWeights {
  const s = weightScales(spec);
  const h = spec.hiddenSize;
  const qDim = spec.numAttentionHeads * spec.headDim;
  const kvDim = spec.numKeyValueHeads * spec.headDim;
  const inter = spec.intermediateSize;
  const layers: LayerWeights[] = [];
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const p = `model.layers.${i}.`;
    layers.push({
      inputNorm: randomTensor(spec, `${p}input_layernorm.weight`, h, s.normNoise, 1),
      q: randomTensor(spec, `${p}self_attn.q_proj.weight`, h * qDim, s.qk),
      k: randomTensor(spec, `${p}self_attn.k_proj.weight`, h * kvDim, s.qk),
      v: randomTensor(spec, `${p}self_attn.v_proj.weight`, h * kvDim, s.v),
      o: randomTensor(spec, `${p}self_attn.o_proj.weight`, qDim * h, s.o),
      postNorm: randomTensor(spec, `${p}post_attention_layernorm.weight`, h, s.normNoise, 1),
      gate: randomTensor(spec, `${p}mlp.gate_proj.weight`, h * inter, s.gateUp),
      up: randomTensor(spec, `${p}mlp.up_proj.weight`, h * inter, s.gateUp),
      down: randomTensor(spec, `${p}mlp.down_proj.weight`, inter * h, s.down),
    });
  }
  return {
    embed: randomTensor(spec, 'model.embed_tokens.weight', spec.vocabSize * h, s.embed),
    layers,
    finalNorm: randomTensor(spec, 'model.norm.weight', h, s.normNoise, 1),
  };
}
