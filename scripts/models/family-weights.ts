/**
 * Deterministic random weights of a family model (families.ts), in the generator's layout:
 * matrices [in, out] (Hugging Face `Linear.weight` transposed), one random stream per tensor
 * derived from (seed, Hugging Face tensor name). Scaling as in weights.ts. Fused Phi-3 weights
 * are generated as the separate q/k/v and gate/up parts (named after the fused tensor plus a
 * part suffix); the graph concatenates them the way `qkv_proj` / `gate_up_proj` are laid out.
 *
 * Norm weights: plain RMSNorm weights are centred on 1; Gemma's are centred on 0 because
 * Gemma multiplies by (1 + w).
 */
import type { FamilySpec } from './families.ts';
import { rngFor } from './prng.ts';

export interface FamilyLayerWeights {
  readonly inputNorm: Float32Array;
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
  /** Biases [heads·D], [kv·D], [kv·D] (Qwen2 only). */
  readonly qBias?: Float32Array;
  readonly kBias?: Float32Array;
  readonly vBias?: Float32Array;
  /** Per-head q/k norms [headDim] (Qwen3, Gemma 3). */
  readonly qNorm?: Float32Array;
  readonly kNorm?: Float32Array;
  readonly o: Float32Array;
  /** post_attention_layernorm: before the MLP (Llama style) or on the attention output (Gemma). */
  readonly postAttnNorm: Float32Array;
  /** Gemma 3 only: pre_feedforward_layernorm, post_feedforward_layernorm. */
  readonly preFfNorm?: Float32Array;
  readonly postFfNorm?: Float32Array;
  readonly gate: Float32Array;
  readonly up: Float32Array;
  readonly down: Float32Array;
}

export interface FamilyWeights {
  readonly embed: Float32Array;
  /** Untied lm_head [hidden, vocab] (Phi-3); undefined when tied to the embedding. */
  readonly lmHead?: Float32Array;
  readonly layers: readonly FamilyLayerWeights[];
  readonly finalNorm: Float32Array;
}

const MLP_ACT_RMS = 0.6;
const ATTN_OUT_RMS = 0.6;

function rand(spec: FamilySpec, name: string, size: number, std: number, mean = 0): Float32Array {
  const out = new Float32Array(size);
  rngFor(spec.seed, name).fillNormal(out, std, mean);
  return out;
}

export function generateFamilyWeights(spec: FamilySpec): FamilyWeights {
  const h = spec.hiddenSize;
  const D = spec.headDim;
  const qDim = spec.numAttentionHeads * D;
  const kvDim = spec.numKeyValueHeads * D;
  const inter = spec.intermediateSize;
  // Gemma scales the embedding by sqrt(h) on input; the tied lm_head still sees the raw table
  const embedStd = spec.init.embedLogitStd / Math.sqrt(h);
  const qk = spec.init.qkGain / Math.sqrt(h);
  const o = (spec.init.residualGain * embedStd * (spec.gemma ? Math.sqrt(h) : 1)) / Math.sqrt(qDim) / ATTN_OUT_RMS;
  const down = (spec.init.residualGain * embedStd * (spec.gemma ? Math.sqrt(h) : 1)) / Math.sqrt(inter) / MLP_ACT_RMS;
  const nm = spec.gemma ? 0 : 1;
  const noise = spec.init.normNoise;
  const attn = spec.fused ? 'self_attn.qkv_proj.weight' : '';
  const mlp = spec.fused ? 'mlp.gate_up_proj.weight' : '';

  const layers: FamilyLayerWeights[] = [];
  for (let i = 0; i < spec.numHiddenLayers; i++) {
    const p = `model.layers.${i}.`;
    const name = (plain: string, fusedName: string, part: string) => (spec.fused && fusedName ? `${p}${fusedName}#${part}` : `${p}${plain}`);
    layers.push({
      inputNorm: rand(spec, `${p}input_layernorm.weight`, h, noise, nm),
      q: rand(spec, name('self_attn.q_proj.weight', attn, 'q'), h * qDim, qk),
      k: rand(spec, name('self_attn.k_proj.weight', attn, 'k'), h * kvDim, qk),
      v: rand(spec, name('self_attn.v_proj.weight', attn, 'v'), h * kvDim, 1 / Math.sqrt(h)),
      ...(spec.qkvBias
        ? {
            qBias: rand(spec, `${p}self_attn.q_proj.bias`, qDim, 0.5),
            kBias: rand(spec, `${p}self_attn.k_proj.bias`, kvDim, 0.5),
            vBias: rand(spec, `${p}self_attn.v_proj.bias`, kvDim, 0.5),
          }
        : {}),
      ...(spec.qkNorm
        ? { qNorm: rand(spec, `${p}self_attn.q_norm.weight`, D, noise * 4, nm), kNorm: rand(spec, `${p}self_attn.k_norm.weight`, D, noise * 4, nm) }
        : {}),
      o: rand(spec, `${p}self_attn.o_proj.weight`, qDim * h, o),
      postAttnNorm: rand(spec, `${p}post_attention_layernorm.weight`, h, noise, nm),
      ...(spec.gemma
        ? {
            preFfNorm: rand(spec, `${p}pre_feedforward_layernorm.weight`, h, noise, nm),
            postFfNorm: rand(spec, `${p}post_feedforward_layernorm.weight`, h, noise, nm),
          }
        : {}),
      gate: rand(spec, name('mlp.gate_proj.weight', mlp, 'gate'), h * inter, 1 / Math.sqrt(h)),
      up: rand(spec, name('mlp.up_proj.weight', mlp, 'up'), h * inter, 1 / Math.sqrt(h)),
      down: rand(spec, `${p}mlp.down_proj.weight`, inter * h, down),
    });
  }
  return {
    embed: rand(spec, 'model.embed_tokens.weight', spec.vocabSize * h, embedStd),
    ...(spec.tieWordEmbeddings ? {} : { lmHead: rand(spec, 'lm_head.weight', h * spec.vocabSize, embedStd) }),
    layers,
    finalNorm: rand(spec, 'model.norm.weight', h, noise, nm),
  };
}

/** Concatenates [rows, colsA] and [rows, colsB] row-major matrices along the columns. */
export function concatColumns(parts: readonly { data: Float32Array; cols: number }[], rows: number): Float32Array {
  const total = parts.reduce((a, p) => a + p.cols, 0);
  const out = new Float32Array(rows * total);
  for (let r = 0; r < rows; r++) {
    let off = r * total;
    for (const p of parts) {
      out.set(p.data.subarray(r * p.cols, (r + 1) * p.cols), off);
      off += p.cols;
    }
  }
  return out;
}
