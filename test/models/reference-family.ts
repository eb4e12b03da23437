/**
 * An independent float64 reference forward pass of the family architectures (Hugging Face
 * Qwen2ForCausalLM, Qwen3ForCausalLM, LlamaForCausalLM with llama3 rope scaling,
 * Phi3ForCausalLM with longrope short factors, Gemma3ForCausalLM), with plain loops: no ONNX,
 * no generator code. It computes its own inverse frequencies (Math.pow / Math.cos / Math.sin,
 * transformers' llama3 and longrope formulas written out again), takes q/k/v and gate/up as the
 * separate matrices (the graph multiplies by their fused concatenation for Phi-3), and applies
 * the per-family details listed in scripts/models/family-graph.ts.
 *
 * Single sequence, positions 0..n-1, causal attention.
 */
import type { FamilySpec } from '../../scripts/models/families.ts';
import type { FamilyWeights } from '../../scripts/models/family-weights.ts';

function matvec(x: Float64Array, w: Float32Array, inDim: number, outDim: number): Float64Array {
  const y = new Float64Array(outDim);
  for (let i = 0; i < inDim; i++) {
    const xi = x[i] as number;
    const row = i * outDim;
    for (let j = 0; j < outDim; j++) y[j] = (y[j] as number) + xi * (w[row + j] as number);
  }
  return y;
}

/** RMSNorm of x[off .. off+dim); Gemma uses (1 + w). */
function rmsNormAt(x: Float64Array, off: number, dim: number, w: Float32Array, eps: number, onePlus: boolean): void {
  let ss = 0;
  for (let i = 0; i < dim; i++) ss += (x[off + i] as number) ** 2;
  const inv = 1 / Math.sqrt(ss / dim + eps);
  for (let i = 0; i < dim; i++) x[off + i] = (x[off + i] as number) * inv * ((onePlus ? 1 : 0) + (w[i] as number));
}

function rmsNorm(x: Float64Array, w: Float32Array, eps: number, onePlus: boolean): Float64Array {
  const y = Float64Array.from(x);
  rmsNormAt(y, 0, y.length, w, eps, onePlus);
  return y;
}

/** Inverse frequencies, written from transformers' rope_init functions. */
export function referenceInvFreq(spec: FamilySpec, local: boolean): { inv: number[]; attnFactor: number } {
  const d = spec.headDim;
  const theta = local ? (spec.ropeLocalTheta as number) : spec.ropeTheta;
  const inv: number[] = [];
  for (let i = 0; i < d; i += 2) inv.push(1 / Math.pow(theta, i / d));
  const sc = spec.ropeScaling;
  if (local || !sc) return { inv, attnFactor: 1 };
  if (sc.ropeType === 'llama3') {
    const out = inv.map((f) => {
      const wavelen = (2 * Math.PI) / f;
      const lowWl = sc.originalMaxPositionEmbeddings / sc.lowFreqFactor;
      const highWl = sc.originalMaxPositionEmbeddings / sc.highFreqFactor;
      let scaled = wavelen > lowWl ? f / sc.factor : f;
      const smooth = (sc.originalMaxPositionEmbeddings / wavelen - sc.lowFreqFactor) / (sc.highFreqFactor - sc.lowFreqFactor);
      const isMedium = !(wavelen < highWl) && !(wavelen > lowWl);
      if (isMedium) scaled = ((1 - smooth) * scaled) / sc.factor + smooth * scaled;
      return scaled;
    });
    return { inv: out, attnFactor: 1 };
  }
  // longrope, positions below original_max_position_embeddings: short factors
  const factor = spec.maxPositionEmbeddings / sc.originalMaxPositionEmbeddings;
  const out = inv.map((_, k) => 1 / ((sc.shortFactor[k] as number) * Math.pow(spec.ropeTheta, (2 * k) / d)));
  return { inv: out, attnFactor: Math.sqrt(1 + Math.log(factor) / Math.log(sc.originalMaxPositionEmbeddings)) };
}

function rope(vec: Float64Array, off: number, d: number, pos: number, f: { inv: number[]; attnFactor: number }): void {
  const half = d / 2;
  for (let i = 0; i < half; i++) {
    const angle = pos * (f.inv[i] as number);
    const c = Math.cos(angle) * f.attnFactor;
    const s = Math.sin(angle) * f.attnFactor;
    const a = vec[off + i] as number;
    const b = vec[off + i + half] as number;
    vec[off + i] = a * c - b * s;
    vec[off + i + half] = b * c + a * s;
  }
}

const geluTanh = (x: number) => 0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x * x * x)));

/** Rounds to the nearest IEEE half (ties to even), subnormals included; no overflow handling (|x| < 10 here). */
export function roundF16(x: number): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const a = Math.abs(x);
  const ulp = 2 ** (Math.max(Math.floor(Math.log2(a)), -14) - 10);
  const q = a / ulp;
  let r = Math.round(q);
  if (q - Math.floor(q) === 0.5 && r % 2 === 1) r -= 1;
  return Math.sign(x) * r * ulp;
}

/**
 * llama.cpp's f32 GELU on the CPU (ggml/src/ggml-cpu/vec.h defines GGML_GELU_FP16): the input is
 * rounded to f16 and looked up in a table of f16 results; 0 below -10, identity above 10.
 */
export const ggmlGeluF16 = (x: number) => (x <= -10 ? 0 : x >= 10 ? x : roundF16(geluTanh(roundF16(x))));
const silu = (x: number) => x / (1 + Math.exp(-x));

/** Logits [n][vocab] for `tokens` at positions 0..n-1. */
export function referenceFamilyForward(
  spec: FamilySpec,
  w: FamilyWeights,
  tokens: readonly number[],
  opts: { readonly gelu?: (x: number) => number } = {},
): Float64Array[] {
  const gelu = opts.gelu ?? geluTanh;
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const n = tokens.length;
  const gemma = spec.gemma;
  const eps = spec.rmsNormEps;
  const inter = spec.intermediateSize;
  const globalF = referenceInvFreq(spec, false);
  const localF = gemma ? referenceInvFreq(spec, true) : globalF;
  const scale = 1 / Math.sqrt(gemma ? (spec.queryPreAttnScalar as number) : D);
  const embedScale = gemma ? Math.fround(Math.sqrt(h)) : 1;

  let hidden: Float64Array[] = tokens.map((t) => Float64Array.from(w.embed.subarray(t * h, (t + 1) * h), (v) => v * embedScale));

  w.layers.forEach((L, li) => {
    const sliding = spec.slidingWindowPattern !== undefined && (li + 1) % spec.slidingWindowPattern !== 0;
    const f = sliding ? localF : globalF;
    const qs: Float64Array[] = [];
    const ks: Float64Array[] = [];
    const vs: Float64Array[] = [];
    for (let p = 0; p < n; p++) {
      const x = rmsNorm(hidden[p] as Float64Array, L.inputNorm, eps, gemma);
      const q = matvec(x, L.q, h, H * D);
      const k = matvec(x, L.k, h, KV * D);
      const v = matvec(x, L.v, h, KV * D);
      if (L.qBias) q.forEach((_, i) => (q[i] = (q[i] as number) + (L.qBias?.[i] as number)));
      if (L.kBias) k.forEach((_, i) => (k[i] = (k[i] as number) + (L.kBias?.[i] as number)));
      if (L.vBias) v.forEach((_, i) => (v[i] = (v[i] as number) + (L.vBias?.[i] as number)));
      for (let hd = 0; hd < H; hd++) {
        if (L.qNorm) rmsNormAt(q, hd * D, D, L.qNorm, eps, gemma);
        rope(q, hd * D, D, p, f);
      }
      for (let hd = 0; hd < KV; hd++) {
        if (L.kNorm) rmsNormAt(k, hd * D, D, L.kNorm, eps, gemma);
        rope(k, hd * D, D, p, f);
      }
      qs.push(q);
      ks.push(k);
      vs.push(v);
    }
    const next: Float64Array[] = [];
    for (let p = 0; p < n; p++) {
      const ctx = new Float64Array(H * D);
      const q = qs[p] as Float64Array;
      const first = sliding ? Math.max(0, p - (spec.slidingWindow as number) + 1) : 0;
      for (let hd = 0; hd < H; hd++) {
        const kvh = Math.floor(hd / (H / KV));
        const sc: number[] = [];
        for (let j = first; j <= p; j++) {
          let dot = 0;
          for (let e = 0; e < D; e++) dot += (q[hd * D + e] as number) * ((ks[j] as Float64Array)[kvh * D + e] as number);
          sc.push(dot * scale);
        }
        const max = Math.max(...sc);
        const ex = sc.map((s) => Math.exp(s - max));
        const z = ex.reduce((a, b) => a + b, 0);
        ex.forEach((e, idx) => {
          const v = vs[first + idx] as Float64Array;
          for (let d = 0; d < D; d++) ctx[hd * D + d] = (ctx[hd * D + d] as number) + (e / z) * (v[kvh * D + d] as number);
        });
      }
      let attn = matvec(ctx, L.o, H * D, h);
      const res = hidden[p] as Float64Array;
      let r1: Float64Array;
      let x2: Float64Array;
      if (gemma) {
        attn = rmsNorm(attn, L.postAttnNorm, eps, true);
        r1 = res.map((v, i) => v + (attn[i] as number));
        x2 = rmsNorm(r1, L.preFfNorm as Float32Array, eps, true);
      } else {
        r1 = res.map((v, i) => v + (attn[i] as number));
        x2 = rmsNorm(r1, L.postAttnNorm, eps, false);
      }
      const g = matvec(x2, L.gate, h, inter);
      const u = matvec(x2, L.up, h, inter);
      const act = g.map((gv, i) => (gemma ? gelu(gv) : silu(gv)) * (u[i] as number));
      let mlp = matvec(act, L.down, inter, h);
      if (gemma) mlp = rmsNorm(mlp, L.postFfNorm as Float32Array, eps, true);
      next.push(r1.map((v, i) => v + (mlp[i] as number)));
    }
    hidden = next;
  });

  return hidden.map((x) => {
    const xn = rmsNorm(x, w.finalNorm, eps, gemma);
    const V = spec.vocabSize;
    const logits = new Float64Array(V);
    if (w.lmHead) {
      const lm = w.lmHead;
      for (let i = 0; i < h; i++) {
        const xi = xn[i] as number;
        const row = i * V;
        for (let t = 0; t < V; t++) logits[t] = (logits[t] as number) + xi * (lm[row + t] as number);
      }
    } else {
      for (let t = 0; t < V; t++) {
        let dot = 0;
        const off = t * h;
        for (let i = 0; i < h; i++) dot += (xn[i] as number) * (w.embed[off + i] as number);
        logits[t] = dot;
      }
    }
    return logits;
  });
}
