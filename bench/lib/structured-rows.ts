/**
 * The `structured` rows (docs/structured-output.md, CONTRACT §1): on the 135M-shaped generated
 * model, in its own Chromium, greedy streamed chat under a JSON schema against the same chat
 * without one — the same prompt, the same max_tokens, temperature 0, each from cold (prefix cache
 * cleared). The schema is bounded but long (an array of a fixed 24 objects), so a constrained reply
 * always runs to max_tokens; speeds are per token after the first either way.
 *
 * Per repetition, a schema not seen before (its property named after the repetition): its first
 * request compiles the grammar, its second finds it in the cache. Order alternates: unconstrained
 * first on even repetitions, last on odd ones. Before the repetitions, one request under another
 * schema pays xgrammar's wasm start and the vocabulary's tables (`first_use_ttft_ms`). The
 * grammar's own share (lookup, compile, matcher, mask fills) is timed inside the worker
 * (bench/page/structured-chat.ts); the masking of the logits is timed there apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import type { StructuredChatTimes } from '../page/structured-chat.ts';
import { chromiumPath } from '../peers/browser.ts';
import { openPage } from './bench-page.ts';
import { fmt, round } from './measure.ts';
import { SMOL } from './plan.ts';
import { median, type StructuredResult } from './schema.ts';

export interface StructuredPlan {
  model: string;
  promptTokens: number;
  newTokens: number;
  reps: number;
}

export function structuredPlan(o: { quick: boolean; reps: number | null }): StructuredPlan {
  return { model: SMOL, promptTokens: 100, newTokens: o.quick ? 32 : 64, reps: o.reps ?? (o.quick ? 2 : 5) };
}

/** A bounded schema a reply cannot finish within max_tokens: 24 items of a short name, a score and a flag. */
export function benchSchema(property: string): Record<string, unknown> {
  const item = {
    type: 'object',
    properties: { name: { type: 'string', maxLength: 8 }, score: { type: 'integer', minimum: 0, maximum: 100 }, ok: { type: 'boolean' } },
    required: ['name', 'score', 'ok'],
    additionalProperties: false,
  };
  return { type: 'object', properties: { [property]: { type: 'array', items: item, minItems: 24, maxItems: 24 } }, required: [property], additionalProperties: false };
}

const format = (property: string) => ({ type: 'json_schema', json_schema: { name: 'bench', schema: benchSchema(property), strict: true } });

export async function measureStructured(plan: StructuredPlan, site: string, mirror: ModelHost, threads: number | undefined, log: (...a: unknown[]) => void): Promise<StructuredResult> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-structured-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    const p = await openPage(ctx, site, log);
    await p.call('load', { model: plan.model, host: mirror.url, device: 'wasm', dtype: 'fp32', threads });
    const user = await p.call<string>('userText', plan.promptTokens, 5);
    const messages = [
      { role: 'system', content: 'Answer with the notes as JSON.' },
      { role: 'user', content: user },
    ];
    const run = (f: unknown | null) => p.call<StructuredChatTimes>('structuredChat', messages, plan.newTokens, f);
    // Warm-up: onnxruntime's arenas, then xgrammar's start and the vocabulary's tables.
    await run(null);
    const firstUse = await run(format('warmup'));
    log(`${plan.model} structured: first use of a grammar (wasm start, vocabulary tables, compile) ${fmt(firstUse.ttft_ms)} to the first token`);
    const s = { ms_per_token: [] as number[], constrained_ms_per_token: [] as number[], ttft_ms: [] as number[], first_ttft_ms: [] as number[], cached_ttft_ms: [] as number[], grammar_first_token_ms: [] as number[] };
    const compile: number[] = [];
    const deltas: number[] = [];
    const fills: number[] = [];
    const accepts: number[] = [];
    const ratios: number[] = [];
    const forwards: number[] = [];
    const othersPlain: number[] = [];
    const othersConstrained: number[] = [];
    let promptTokens = 0;
    for (let rep = 0; rep < plan.reps; rep++) {
      const property = `notes_${rep}_${Date.now() % 100000}`;
      let plain: StructuredChatTimes | null = null;
      if (rep % 2 === 0) plain = await run(null);
      const first = await run(format(property));
      const cached = await run(format(property));
      if (rep % 2 === 1) plain = await run(null);
      for (const c of [first, cached]) {
        if (c.tokens !== plan.newTokens || c.finish !== 'length') throw new Error(`structured bench: a constrained reply ended after ${c.tokens} of ${plan.newTokens} tokens (${c.finish}): ${c.text}`);
        s.constrained_ms_per_token.push(c.ms_per_token!);
        fills.push(c.fill_ms / c.fills);
        accepts.push(c.accept_ms / c.tokens);
        othersConstrained.push(c.other_ms_per_token!);
      }
      forwards.push(plain!.forward_ms_per_token!);
      othersPlain.push(plain!.other_ms_per_token!);
      // This repetition's constrained runs against its unconstrained one, run beside them.
      ratios.push((first.ms_per_token! + cached.ms_per_token!) / 2 / plain!.ms_per_token!);
      s.ms_per_token.push(plain!.ms_per_token!);
      s.ttft_ms.push(plain!.ttft_ms);
      s.first_ttft_ms.push(first.ttft_ms);
      s.cached_ttft_ms.push(cached.ttft_ms);
      s.grammar_first_token_ms.push(cached.grammar_first_token_ms);
      compile.push(first.grammar_ms);
      deltas.push(cached.ttft_ms - plain!.ttft_ms);
      promptTokens = plain!.prompt_tokens;
      log(
        `${plan.model} structured rep ${rep + 1}/${plan.reps}: ${plain!.ms_per_token!.toFixed(1)} ms/token plain, ${first.ms_per_token!.toFixed(1)} / ${cached.ms_per_token!.toFixed(1)} under the schema; ` +
          `outside the forward pass ${plain!.other_ms_per_token!.toFixed(2)} vs ${first.other_ms_per_token!.toFixed(2)} / ${cached.other_ms_per_token!.toFixed(2)} ms/token; ttft ${fmt(plain!.ttft_ms)} plain, ${fmt(first.ttft_ms)} compiling (${fmt(first.grammar_ms)}), ${fmt(cached.ttft_ms)} cached (grammar ${cached.grammar_first_token_ms.toFixed(2)} ms)`,
      );
    }
    const masking = await p.call<number>('maskingMs');
    await p.call('dispose');
    await p.close();
    const fill = median(fills);
    const accept = median(accepts);
    const plainMs = median(s.ms_per_token);
    const constrainedMs = median(s.constrained_ms_per_token);
    return {
      device: 'wasm',
      model: plan.model,
      dtype: 'fp32',
      prompt_tokens: promptTokens,
      new_tokens: plan.newTokens,
      decode_tps: round(1000 / plainMs, 2),
      constrained_decode_tps: round(1000 / constrainedMs, 2),
      token_cost_ratio: round(median(ratios), 3),
      token_cost_ratio_direct: round((plainMs + fill + masking + accept) / plainMs, 3),
      token_cost_ratio_outside_forward: round((median(forwards) + median(othersConstrained)) / (median(forwards) + median(othersPlain)), 3),
      forward_ms_per_token: round(median(forwards), 2),
      other_ms_per_token: round(median(othersPlain), 3),
      constrained_other_ms_per_token: round(median(othersConstrained), 3),
      ttft_ms: round(median(s.ttft_ms)),
      first_ttft_ms: round(median(s.first_ttft_ms)),
      cached_ttft_ms: round(median(s.cached_ttft_ms)),
      cached_ttft_delta_ms: round(median(deltas)),
      grammar_first_token_ms: round(median(s.grammar_first_token_ms) + masking, 3),
      compile_ms: round(median(compile)),
      first_use_ttft_ms: round(firstUse.ttft_ms),
      mask_ms_per_token: round(fill + masking, 3),
      fill_ms_per_token: round(fill, 3),
      masking_ms_per_token: round(masking, 3),
      accept_ms_per_token: round(accept, 3),
      schema: JSON.stringify(benchSchema('notes')),
      reps: plan.reps,
      samples: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.map((x) => round(x, 2))])) as StructuredResult['samples'],
    };
  } finally {
    await ctx.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
}
