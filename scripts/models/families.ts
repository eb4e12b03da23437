/**
 * Specifications of the random-weight models of real families (Qwen3, Qwen2.5, Llama 3.2,
 * Phi-3.5, Gemma 3 text): small dimensions, the real vocabulary size, and the architecture
 * switches in which the families differ from plain Llama. Names are fixed: tests and the app
 * load `models/<name>/`.
 */
import type { DecoderSpec, WeightInit } from './specs.ts';

export type FamilyId = 'qwen3' | 'qwen2' | 'llama3' | 'phi3' | 'gemma3';

/** transformers' llama3 rope scaling (Llama 3.1/3.2). */
export interface Llama3RopeScaling {
  readonly ropeType: 'llama3';
  readonly factor: number;
  readonly lowFreqFactor: number;
  readonly highFreqFactor: number;
  readonly originalMaxPositionEmbeddings: number;
}

/** Phi-3.5's longrope: the graph implements the short factors (positions < originalMax). */
export interface LongRopeScaling {
  readonly ropeType: 'longrope';
  readonly shortFactor: readonly number[];
  readonly longFactor: readonly number[];
  /** config.original_max_position_embeddings; also the number of rows of the RoPE table. */
  readonly originalMaxPositionEmbeddings: number;
}

export interface FamilySpec extends DecoderSpec {
  readonly family: FamilyId;
  /** Rows of the RoPE tables in the graph (positions the graph accepts). */
  readonly ropeRows: number;
  readonly tieWordEmbeddings: boolean;
  /** q/k/v projections with biases (Qwen2). */
  readonly qkvBias: boolean;
  /** Per-head RMSNorm on q and k before RoPE (Qwen3, Gemma 3). */
  readonly qkNorm: boolean;
  /** Fused qkv_proj and gate_up_proj weights (Phi-3). */
  readonly fused: boolean;
  /** Gemma 3: √hidden embedding scale, (1 + w) norms, GELU-tanh, four norms per layer. */
  readonly gemma: boolean;
  /** Gemma 3: sliding window (keys with query - key < window are seen) of the local layers. */
  readonly slidingWindow?: number;
  /** Gemma 3: every `slidingWindowPattern`-th layer (1-based) is global; the others are local. */
  readonly slidingWindowPattern?: number;
  /** Gemma 3: rope theta of the local layers. */
  readonly ropeLocalTheta?: number;
  /** Gemma 3: attention scale is queryPreAttnScalar^-0.5 instead of headDim^-0.5. */
  readonly queryPreAttnScalar?: number;
  readonly ropeScaling?: Llama3RopeScaling | LongRopeScaling;
}

const INIT: WeightInit = { embedLogitStd: 2.5, qkGain: 1.5, residualGain: 3, normNoise: 0.05 };

export const TINY_RANDOM_QWEN3: FamilySpec = {
  name: 'tiny-random-qwen3',
  alias: 'qwen3',
  family: 'qwen3',
  seed: 30_000_001,
  hiddenSize: 32,
  intermediateSize: 96,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 16, // 4 × 16 = 64 ≠ hidden 32: decoupled, as in Qwen3
  vocabSize: 151936,
  maxPositionEmbeddings: 2048,
  ropeRows: 2048,
  ropeTheta: 1_000_000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: false,
  qkNorm: true,
  fused: false,
  gemma: false,
  init: INIT,
};

export const TINY_RANDOM_QWEN2: FamilySpec = {
  name: 'tiny-random-qwen2',
  alias: 'qwen2',
  family: 'qwen2',
  seed: 25_000_001,
  hiddenSize: 32,
  intermediateSize: 96,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 8,
  vocabSize: 151936,
  maxPositionEmbeddings: 2048,
  ropeRows: 2048,
  ropeTheta: 1_000_000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: true,
  qkNorm: false,
  fused: false,
  gemma: false,
  init: INIT,
};

export const TINY_RANDOM_LLAMA3: FamilySpec = {
  name: 'tiny-random-llama3',
  alias: 'llama3',
  family: 'llama3',
  seed: 32_000_001,
  hiddenSize: 32,
  intermediateSize: 96,
  numHiddenLayers: 2,
  numAttentionHeads: 2,
  numKeyValueHeads: 1,
  // 16 so that the 8 frequencies of theta 500000 cover all three llama3 branches
  // (wavelength < 2048: kept, 2048..8192: smoothed, > 8192: divided by the factor)
  headDim: 16,
  vocabSize: 128256,
  maxPositionEmbeddings: 2048,
  ropeRows: 2048,
  ropeTheta: 500_000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: true,
  qkvBias: false,
  qkNorm: false,
  fused: false,
  gemma: false,
  ropeScaling: { ropeType: 'llama3', factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
  init: INIT,
};

export const TINY_RANDOM_PHI3: FamilySpec = {
  name: 'tiny-random-phi3',
  alias: 'phi3',
  family: 'phi3',
  seed: 35_000_001,
  hiddenSize: 32,
  intermediateSize: 96,
  numHiddenLayers: 2,
  numAttentionHeads: 4,
  numKeyValueHeads: 4,
  headDim: 8,
  vocabSize: 32064,
  maxPositionEmbeddings: 131072,
  ropeRows: 4096,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  qkvBias: false,
  qkNorm: false,
  fused: true,
  gemma: false,
  // every 12th of Phi-3.5-mini's 48 factors (head_dim 96 there, 8 here)
  ropeScaling: {
    ropeType: 'longrope',
    shortFactor: [1.0, 1.1599998474121094, 1.9899996519088745, 2.0299997329711914],
    longFactor: [1.0800000429153442, 7.700000286102295, 50.340003967285156, 63.93000411987305],
    originalMaxPositionEmbeddings: 4096,
  },
  init: INIT,
};

export const TINY_RANDOM_GEMMA3: FamilySpec = {
  name: 'tiny-random-gemma3',
  alias: 'gemma3',
  family: 'gemma3',
  seed: 33_000_001,
  hiddenSize: 32,
  intermediateSize: 96,
  // 6 layers: llama.cpp's gemma3 hard-codes the 5-local / 1-global layer pattern (set_swa_pattern(6))
  numHiddenLayers: 6,
  numAttentionHeads: 4,
  numKeyValueHeads: 1,
  headDim: 16, // 4 × 16 = 64 ≠ hidden 32: decoupled, as in Gemma 3
  vocabSize: 262144,
  maxPositionEmbeddings: 2048,
  ropeRows: 2048,
  ropeTheta: 1_000_000,
  rmsNormEps: 1e-6,
  tieWordEmbeddings: true,
  qkvBias: false,
  qkNorm: true,
  fused: false,
  gemma: true,
  slidingWindow: 16,
  slidingWindowPattern: 6, // layers 0-4 local (sliding), layer 5 global, as llama.cpp assumes
  ropeLocalTheta: 10000, // llama.cpp's gemma3 hard-codes 10000 for the local layers
  // llama.cpp scales queries by head_dim^-0.5 (all Gemma 3 sizes but 27B), so query_pre_attn_scalar
  // = head_dim 16; hidden / heads = 8 differs, so a scale taken from the wrong dimension still shows
  queryPreAttnScalar: 16,
  init: INIT,
};

export const FAMILY_SPECS: readonly FamilySpec[] = [
  TINY_RANDOM_QWEN3,
  TINY_RANDOM_QWEN2,
  TINY_RANDOM_LLAMA3,
  TINY_RANDOM_PHI3,
  TINY_RANDOM_GEMMA3,
];

/** True for Gemma 3's sliding-window (local) layers. */
export function isSlidingLayer(spec: Pick<FamilySpec, 'slidingWindowPattern'>, layer: number): boolean {
  return spec.slidingWindowPattern !== undefined && (layer + 1) % spec.slidingWindowPattern !== 0;
}

export function validateFamilySpec(spec: FamilySpec): void {
  const fail = (why: string): never => {
    throw new Error(`spec ${spec.name}: ${why}`);
  };
  if (spec.numAttentionHeads % spec.numKeyValueHeads !== 0) fail('heads must be a multiple of kv heads');
  if (spec.headDim % 2 !== 0) fail('head_dim must be even (rotate-half RoPE)');
  if (spec.ropeRows > spec.maxPositionEmbeddings) fail('ropeRows exceeds max_position_embeddings');
  if (spec.ropeScaling?.ropeType === 'longrope') {
    if (spec.ropeScaling.shortFactor.length !== spec.headDim / 2) fail('longrope short_factor needs head_dim / 2 entries');
    if (spec.ropeScaling.longFactor.length !== spec.headDim / 2) fail('longrope long_factor needs head_dim / 2 entries');
  }
  if (spec.gemma && (spec.slidingWindow === undefined || spec.queryPreAttnScalar === undefined || spec.ropeLocalTheta === undefined)) {
    fail('gemma needs slidingWindow, queryPreAttnScalar and ropeLocalTheta');
  }
}
