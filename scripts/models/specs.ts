/**
 * The test-model specifications. Names are fixed: other code loads `models/<name>/`.
 */
import { createHash } from 'node:crypto';

/**
 * What every random test model's spec gives, the Llama ones here and the families' (families.ts
 * `FamilySpec`): its names, its seed, the decoder's dimensions, and how its weights are scaled.
 */
export interface DecoderSpec {
  /** Directory name under models/ and the id passed to `from_pretrained`. */
  readonly name: string;
  /** Short alias accepted by the CLI's `--only`. */
  readonly alias: string;
  /** Master seed; every tensor's stream is derived from (seed, tensor name). */
  readonly seed: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numHiddenLayers: number;
  readonly numAttentionHeads: number;
  readonly numKeyValueHeads: number;
  /** May differ from hidden / heads (Qwen3, Gemma 3). */
  readonly headDim: number;
  readonly vocabSize: number;
  /** config.max_position_embeddings. */
  readonly maxPositionEmbeddings: number;
  readonly ropeTheta: number;
  readonly rmsNormEps: number;
  readonly init: WeightInit;
}

/** Hyper-parameters and generation settings of one random Llama test model. */
export interface ModelSpec extends DecoderSpec {
  /**
   * Also write the hub's other dtypes beside onnx/model.onnx: model_fp16, model_q4, model_q4f16
   * and model_quantized (q8), see write-model.ts.
   */
  readonly q8: boolean;
  /**
   * The onnxruntime-genai-builder-style sibling (gqa-graph.ts) of a spec: same weights, tokenizer
   * and config, written to `<name>-gqa`. Set only by `gqaSpec`.
   */
  readonly gqa?: boolean;
}

/** The GQA-export sibling of a Llama spec: `<name>-gqa`, alias `<alias>-gqa`, the same seed (so the same weights). */
export function gqaSpec(spec: ModelSpec): ModelSpec {
  return { ...spec, name: `${spec.name}-gqa`, alias: `${spec.alias}-gqa`, gqa: true };
}

/**
 * How the random weights are scaled (see weights.ts for the derivation). In short: the tied
 * embedding's scale fixes the standard deviation of the logits (≈ embedLogitStd), and
 * residualGain makes the attention/MLP contributions dominate the residual stream so the model
 * does not simply predict its input token again.
 */
export interface WeightInit {
  /** Target standard deviation of the logits over the vocabulary. */
  readonly embedLogitStd: number;
  /** Scale of q/k projections relative to 1/sqrt(fan_in) (sharpness of attention). */
  readonly qkGain: number;
  /** Per-layer output (o_proj, down_proj) magnitude relative to the embedding's. */
  readonly residualGain: number;
  /** Standard deviation of the noise added to the RMSNorm weights (which are centred on 1). */
  readonly normNoise: number;
}

export const TINY_RANDOM_LLAMA: ModelSpec = {
  name: 'tiny-random-llama',
  alias: 'tiny',
  seed: 20240601,
  hiddenSize: 64,
  intermediateSize: 192,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 16,
  vocabSize: 1024,
  maxPositionEmbeddings: 1024,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  init: { embedLogitStd: 2.5, qkGain: 1.5, residualGain: 3, normNoise: 0.05 },
  q8: true,
};

export const SMOLLM2_135M_RANDOM: ModelSpec = {
  name: 'smollm2-135m-random',
  alias: 'smol',
  seed: 135_000_000,
  hiddenSize: 576,
  intermediateSize: 1536,
  numHiddenLayers: 30,
  numAttentionHeads: 9,
  numKeyValueHeads: 3,
  headDim: 64,
  vocabSize: 49152,
  maxPositionEmbeddings: 8192,
  ropeTheta: 100000,
  rmsNormEps: 1e-5,
  init: { embedLogitStd: 3, qkGain: 1, residualGain: 2, normNoise: 0.05 },
  q8: true,
};

/** The Optimum-style specs. */
export const BASE_MODEL_SPECS: readonly ModelSpec[] = [TINY_RANDOM_LLAMA, SMOLLM2_135M_RANDOM];

/** All specs, in generation order: each Optimum-style spec followed by its GQA sibling. */
export const MODEL_SPECS: readonly ModelSpec[] = BASE_MODEL_SPECS.flatMap((s) => [s, gqaSpec(s)]);

/** Spec names, e.g. for `from_pretrained`. */
export const TINY_MODEL_NAME = TINY_RANDOM_LLAMA.name;
export const SMOL_MODEL_NAME = SMOLLM2_135M_RANDOM.name;
export const TINY_GQA_MODEL_NAME = `${TINY_RANDOM_LLAMA.name}-gqa`;
export const SMOL_GQA_MODEL_NAME = `${SMOLLM2_135M_RANDOM.name}-gqa`;

/** Looks a spec up by name or alias ('tiny' | 'smol' | 'tiny-gqa' | 'smol-gqa'); throws on unknown names. */
export function findSpec(nameOrAlias: string): ModelSpec {
  const spec = MODEL_SPECS.find((s) => s.name === nameOrAlias || s.alias === nameOrAlias);
  if (!spec) {
    const known = MODEL_SPECS.map((s) => `${s.alias} (${s.name})`).join(', ');
    throw new Error(`unknown model spec "${nameOrAlias}"; known: ${known}`);
  }
  return spec;
}

/** Checks the internal consistency of a spec. */
export function validateSpec(spec: ModelSpec): void {
  const fail = (why: string): never => {
    throw new Error(`spec ${spec.name}: ${why}`);
  };
  if (spec.numAttentionHeads % spec.numKeyValueHeads !== 0) fail('heads must be a multiple of kv heads');
  if (spec.headDim % 2 !== 0) fail('head_dim must be even (rotate-half RoPE)');
  if (spec.numAttentionHeads * spec.headDim !== spec.hiddenSize) fail('heads * head_dim must equal hidden');
  if (spec.vocabSize < 259 + 32) fail('vocab too small for 3 specials + 256 bytes + merges');
}

/** Canonical JSON (sorted keys), so that hashes do not depend on property order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** sha256 of the spec's canonical JSON. */
export function specHash(spec: { readonly name: string }): string {
  return createHash('sha256').update(canonicalJson(spec)).digest('hex');
}

/** Number of parameters (tied embedding counted once). */
export function parameterCount(spec: ModelSpec): number {
  const h = spec.hiddenSize;
  const kv = spec.numKeyValueHeads * spec.headDim;
  const perLayer = h * h * 2 + h * kv * 2 + 3 * h * spec.intermediateSize + 2 * h;
  return spec.vocabSize * h + spec.numHiddenLayers * perLayer + h;
}
