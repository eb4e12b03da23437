/**
 * llama.cpp agrees with this engine on the family models (scripts/models/families.ts): wllama 3.8.1
 * on `gguf/model-f32.gguf` (scripts/models/gguf-family.ts) and the engine on the ONNX file of the
 * same weights, in one headless Chromium page (bench/peers/check-wllama.ts), with the bounds of the
 * Llama check: same token count for every test string, same next-token top-k, 24 identical greedy
 * tokens, log-probs within 1e-3 (flash attention off, f32 KV cache). The GGUF files carry the real
 * tokenizers (byte-level BPE with the `qwen2` / `llama-bpe` pre-tokenizers), so this also checks
 * llama.cpp's tokenization of them against transformers.js's.
 * The browser check is skipped where no Chromium is installed; the layout checks below it are not.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumPath, launchChromium } from '../../bench/peers/browser.ts';
import { DEFAULT_BOUND, checkModels, summarize } from '../../bench/peers/check-wllama.ts';
import { TINY_RANDOM_LLAMA3, TINY_RANDOM_PHI3, TINY_RANDOM_QWEN2, TINY_RANDOM_QWEN3 } from '../../scripts/models/families.ts';
import { familyInvFreq } from '../../scripts/models/family-rope.ts';
import { generateFamilyWeights } from '../../scripts/models/family-weights.ts';
import { DEFAULT_MODELS_DIR, generateModels } from '../../scripts/models/generate-models.ts';
import { readGguf } from '../../scripts/models/gguf.ts';
import { GGUF_F32_FILE } from '../../scripts/models/gguf-family.ts';

const hasChromium = (() => {
  try {
    return !!chromiumPath();
  } catch {
    return false;
  }
})();

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3'];
const ALIASES = ['qwen2', 'qwen3', 'llama3', 'phi3'];

let browser: Browser;

describe.skipIf(!hasChromium)('wllama (llama.cpp) vs the engine on the family models', () => {
  beforeAll(async () => {
    await generateModels({ only: ALIASES });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it(`agrees on tokenization, greedy tokens and log-probs (within ${DEFAULT_BOUND})`, async () => {
    const results = await checkModels(browser, FAMILIES, { build: true, steps: 24 });
    expect(results.map((r) => r.model)).toEqual(FAMILIES);
    for (const r of results) {
      console.log(summarize(r));
      expect(r.tokenization.every((t) => t.agree), `${r.model} tokenization`).toBe(true);
      expect(r.greedy.prompt_tokens.engine).toBe(r.greedy.prompt_tokens.wllama);
      expect(r.greedy.identical, `${r.model} greedy tokens`).toBe(true);
      expect(r.greedy.compared_top).toBeGreaterThan(0);
      expect(r.greedy.max_abs_dlogprob_top).toBeLessThanOrEqual(DEFAULT_BOUND);
      expect(r.pass).toBe(true);
    }
  }, 600_000);
});

describe('family GGUF layout', () => {
  beforeAll(async () => {
    await generateModels({ only: ALIASES });
  }, 120_000);

  it.each([TINY_RANDOM_QWEN2, TINY_RANDOM_QWEN3, TINY_RANDOM_LLAMA3, TINY_RANDOM_PHI3])('$name: every tokenizer.json token at its id, vocab_size slots', (spec) => {
    const dir = join(DEFAULT_MODELS_DIR, spec.name);
    const tok = JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')) as {
      model: { vocab: Record<string, number>; merges: unknown[] };
      added_tokens: { id: number; content: string; special: boolean }[];
    };
    const g = readGguf(join(dir, GGUF_F32_FILE));
    try {
      const tokens = g.metadata.get('tokenizer.ggml.tokens')?.value as string[];
      const types = g.metadata.get('tokenizer.ggml.token_type')?.value as number[];
      expect(tokens).toHaveLength(spec.vocabSize);
      expect(types).toHaveLength(spec.vocabSize);
      for (const [text, id] of Object.entries(tok.model.vocab)) if (tokens[id] !== text) expect(tokens[id], `token ${id}`).toBe(text);
      for (const a of tok.added_tokens) {
        expect(tokens[a.id]).toBe(a.content);
        if (a.special) expect(types[a.id], a.content).toBe(3); // CONTROL
      }
      const spm = spec.family === 'phi3';
      expect(g.metadata.get('tokenizer.ggml.model')?.value).toBe(spm ? 'llama' : 'gpt2');
      if (!spm) expect((g.metadata.get('tokenizer.ggml.merges')?.value as string[]).length).toBe(tok.model.merges.length);
      const token = g.tensors.find((t) => t.name === 'token_embd.weight');
      expect(token?.ne).toEqual([spec.hiddenSize, spec.vocabSize]);
    } finally {
      g.close();
    }
  });

  it('llama3: rope_freqs divides each base frequency down to transformers\' llama3-scaled one', () => {
    const spec = TINY_RANDOM_LLAMA3;
    const g = readGguf(join(DEFAULT_MODELS_DIR, spec.name, GGUF_F32_FILE));
    try {
      const ff = g.readTensor('rope_freqs.weight');
      const base = Array.from({ length: spec.headDim / 2 }, (_, i) => spec.ropeTheta ** (-(2 * i) / spec.headDim));
      const scaled = familyInvFreq(spec, spec.ropeTheta);
      expect(ff).toHaveLength(spec.headDim / 2);
      // all three llama3 branches occur: kept (1), divided (factor), smoothed (in between)
      expect(ff.some((f) => f === 1) && ff.some((f) => f === 32) && ff.some((f) => f > 1 && f < 32)).toBe(true);
      ff.forEach((f, i) => expect(Math.abs(base[i]! / f / scaled[i]! - 1)).toBeLessThan(1e-6));
    } finally {
      g.close();
    }
  });

  it('phi3: attn_qkv and ffn_up hold q|k|v and gate|up rows in Hugging Face order', () => {
    const spec = TINY_RANDOM_PHI3;
    const w = generateFamilyWeights(spec).layers[1]!;
    const g = readGguf(join(DEFAULT_MODELS_DIR, spec.name, GGUF_F32_FILE));
    try {
      const h = spec.hiddenSize;
      const qd = spec.numAttentionHeads * spec.headDim;
      const kvd = spec.numKeyValueHeads * spec.headDim;
      const inter = spec.intermediateSize;
      const qkv = g.readTensor('blk.1.attn_qkv.weight'); // HF [q + 2kv, h]: element (row o, col i) at o·h + i
      const up = g.readTensor('blk.1.ffn_up.weight');
      for (let i = 0; i < h; i++) {
        for (let o = 0; o < qd; o++) expect(qkv[o * h + i]).toBe(w.q[i * qd + o]);
        for (let o = 0; o < kvd; o++) {
          expect(qkv[(qd + o) * h + i]).toBe(w.k[i * kvd + o]);
          expect(qkv[(qd + kvd + o) * h + i]).toBe(w.v[i * kvd + o]);
        }
        for (let o = 0; o < inter; o++) {
          expect(up[o * h + i]).toBe(w.gate[i * inter + o]);
          expect(up[(inter + o) * h + i]).toBe(w.up[i * inter + o]);
        }
      }
      expect(Array.from(g.readTensor('rope_factors_short.weight'))).toEqual(spec.ropeScaling?.ropeType === 'longrope' ? spec.ropeScaling.shortFactor.map(Math.fround) : []);
      expect(g.metadata.get('phi3.rope.scaling.attn_factor')?.value).toBeCloseTo(Math.sqrt(1 + Math.log(32) / Math.log(4096)), 6);
    } finally {
      g.close();
    }
  });

  it('qwen2: q/k/v biases; qwen3: q/k norms and head_dim 16 ≠ hidden / heads', () => {
    const g2 = readGguf(join(DEFAULT_MODELS_DIR, TINY_RANDOM_QWEN2.name, GGUF_F32_FILE));
    const g3 = readGguf(join(DEFAULT_MODELS_DIR, TINY_RANDOM_QWEN3.name, GGUF_F32_FILE));
    try {
      const w2 = generateFamilyWeights(TINY_RANDOM_QWEN2).layers[0]!;
      expect(Array.from(g2.readTensor('blk.0.attn_k.bias'))).toEqual(Array.from(w2.kBias!));
      expect(g2.tensors.some((t) => t.name.includes('q_norm'))).toBe(false);
      const w3 = generateFamilyWeights(TINY_RANDOM_QWEN3).layers[1]!;
      expect(Array.from(g3.readTensor('blk.1.attn_q_norm.weight'))).toEqual(Array.from(w3.qNorm!));
      expect(g3.metadata.get('qwen3.attention.key_length')?.value).toBe(16);
      expect(g3.tensors.find((t) => t.name === 'blk.0.attn_q.weight')?.ne).toEqual([32, 64]);
      expect(g3.tensors.some((t) => t.name.endsWith('.bias'))).toBe(false);
    } finally {
      g2.close();
      g3.close();
    }
  });
});
