/**
 * An independent float64 reference forward pass of Hugging Face LlamaForCausalLM, written with
 * plain loops (no ONNX, no shared graph code). It reads weights in the generator's in-memory
 * layout (matrices [in, out], i.e. HF `Linear.weight` transposed) and computes its own RoPE
 * (Math.pow / Math.cos / Math.sin) and GQA (query head h uses kv head floor(h / (H / KV))).
 *
 * Single sequence, positions 0..n-1, causal attention, tied lm_head.
 */
import type { ModelSpec } from '../../scripts/models/specs.ts';
import type { LlamaWeights } from '../../scripts/models/weights.ts';

/** y[out] = x[in] @ W[in, out] */
function matvec(x: Float64Array, w: Float32Array, inDim: number, outDim: number): Float64Array {
  const y = new Float64Array(outDim);
  for (let i = 0; i < inDim; i++) {
    const xi = x[i] as number;
    if (xi === 0) continue;
    const row = i * outDim;
    for (let j = 0; j < outDim; j++) y[j] = (y[j] as number) + xi * (w[row + j] as number);
  }
  return y;
}

function rmsNorm(x: Float64Array, w: Float32Array, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * inv * (w[i] as number));
}

/** Applies rotate-half RoPE in place to one head vector at `pos`. */
function rope(vec: Float64Array, offset: number, d: number, pos: number, theta: number): void {
  const half = d / 2;
  for (let i = 0; i < half; i++) {
    const angle = pos * Math.pow(theta, -(2 * i) / d);
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    const a = vec[offset + i] as number;
    const b = vec[offset + i + half] as number;
    vec[offset + i] = a * c - b * s;
    vec[offset + i + half] = b * c + a * s;
  }
}

/** Logits [n][vocab] for `tokens` (float64). */
export function referenceForward(spec: ModelSpec, w: LlamaWeights, tokens: readonly number[]): Float64Array[] {
  const h = spec.hiddenSize;
  const H = spec.numAttentionHeads;
  const KV = spec.numKeyValueHeads;
  const D = spec.headDim;
  const nRep = H / KV;
  const n = tokens.length;

  let hidden: Float64Array[] = tokens.map((t) => Float64Array.from(w.embed.subarray(t * h, (t + 1) * h)));

  for (const layer of w.layers) {
    const qs: Float64Array[] = [];
    const ks: Float64Array[] = [];
    const vs: Float64Array[] = [];
    for (let p = 0; p < n; p++) {
      const x = rmsNorm(hidden[p] as Float64Array, layer.inputNorm, spec.rmsNormEps);
      const q = matvec(x, layer.q, h, H * D);
      const k = matvec(x, layer.k, h, KV * D);
      for (let hd = 0; hd < H; hd++) rope(q, hd * D, D, p, spec.ropeTheta);
      for (let hd = 0; hd < KV; hd++) rope(k, hd * D, D, p, spec.ropeTheta);
      qs.push(q);
      ks.push(k);
      vs.push(matvec(x, layer.v, h, KV * D));
    }
    const next: Float64Array[] = [];
    for (let p = 0; p < n; p++) {
      const ctx = new Float64Array(H * D);
      const q = qs[p] as Float64Array;
      for (let hd = 0; hd < H; hd++) {
        const kvh = Math.floor(hd / nRep);
        const scores = new Float64Array(p + 1);
        let max = -Infinity;
        for (let j = 0; j <= p; j++) {
          const k = ks[j] as Float64Array;
          let dot = 0;
          for (let e = 0; e < D; e++) dot += (q[hd * D + e] as number) * (k[kvh * D + e] as number);
          scores[j] = dot / Math.sqrt(D);
          if ((scores[j] as number) > max) max = scores[j] as number;
        }
        let z = 0;
        for (let j = 0; j <= p; j++) {
          scores[j] = Math.exp((scores[j] as number) - max);
          z += scores[j] as number;
        }
        for (let j = 0; j <= p; j++) {
          const pj = (scores[j] as number) / z;
          const v = vs[j] as Float64Array;
          for (let e = 0; e < D; e++) ctx[hd * D + e] = (ctx[hd * D + e] as number) + pj * (v[kvh * D + e] as number);
        }
      }
      const attnOut = matvec(ctx, layer.o, H * D, h);
      const r1 = (hidden[p] as Float64Array).map((v, i) => v + (attnOut[i] as number));
      const x2 = rmsNorm(r1, layer.postNorm, spec.rmsNormEps);
      const gate = matvec(x2, layer.gate, h, spec.intermediateSize);
      const up = matvec(x2, layer.up, h, spec.intermediateSize);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * (up[i] as number));
      const down = matvec(act, layer.down, spec.intermediateSize, h);
      next.push(r1.map((v, i) => v + (down[i] as number)));
    }
    hidden = next;
  }

  return hidden.map((x) => {
    const xn = rmsNorm(x, w.finalNorm, spec.rmsNormEps);
    const logits = new Float64Array(spec.vocabSize);
    for (let t = 0; t < spec.vocabSize; t++) {
      let dot = 0;
      const off = t * h;
      for (let i = 0; i < h; i++) dot += (xn[i] as number) * (w.embed[off + i] as number);
      logits[t] = dot;
    }
    return logits;
  });
}
