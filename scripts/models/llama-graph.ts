/**
 * The ONNX graph of a random Llama model (specs.ts): the family graph (family-graph.ts) with every
 * family switch off (no biases, no q/k norms, nothing fused, not Gemma), its rotary tables
 * unscaled (rope.ts, one row per position up to max_position_embeddings), written in every hub
 * dtype (fp32, fp16, q4, q4f16, q8: linear-formats.ts). Its files are byte for byte those of the
 * Llama builder this file held before the family graph took it over (the family graph writes its
 * nodes and initializers in that order), so measurements made on them still hold.
 */
import { type FamilyGraphSpec, buildFamilyGraph } from './family-graph.ts';
import type { FamilyWeights } from './family-weights.ts';
import type { WeightFormat } from './linear-formats.ts';
import type { GraphBuilder } from './onnx-graph.ts';
import type { RopeTables } from './rope.ts';
import type { ModelSpec } from './specs.ts';
import type { LlamaWeights } from './weights.ts';

export { type WeightFormat, WEIGHT_FORMATS, activationType, isHalfFormat } from './linear-formats.ts';
export { DIMS, MASK_VALUE, ONNX_META, familyInputNames as modelInputNames, familyOutputNames as modelOutputNames } from './family-graph.ts';

/** A Llama spec read as a family's: plain Llama, every switch off. */
export function llamaAsFamily(spec: ModelSpec): FamilyGraphSpec {
  return { ...spec, fused: false, gemma: false };
}

/** Llama weights in the family's names (`postNorm` is the family's `postAttnNorm`). */
export function llamaWeightsAsFamily(weights: LlamaWeights): FamilyWeights {
  return {
    embed: weights.embed,
    finalNorm: weights.finalNorm,
    layers: weights.layers.map(({ postNorm, ...layer }) => ({ ...layer, postAttnNorm: postNorm })),
  };
}

export function buildLlamaGraph(spec: ModelSpec, weights: LlamaWeights, rope: RopeTables, format: WeightFormat): GraphBuilder {
  return buildFamilyGraph(llamaAsFamily(spec), llamaWeightsAsFamily(weights), { global: rope }, format);
}
