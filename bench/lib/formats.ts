/**
 * The format rows of the benchmark: every ONNX dtype of a generated model (fp32, fp16, q4, q4f16,
 * q8, as the hub ships them, all from the same weights: scripts/models), and the GQA export
 * (`<model>-gqa`, onnxruntime-genai builder style) beside the Optimum-style one, measured through
 * the engine on one device:
 *
 *   load        a fresh browser profile, files over the network from the mirror
 *   chat        greedy, `chat.promptTokens` of prose: prefill = prompt tokens ÷ time to the first
 *               token; decode = (new tokens − 1) ÷ the time after it; the text is compared with fp32's
 *   decision    one Engine.decide of `decision.questions` questions on a `decision.stateTokens` state
 *               (a fresh state per call: no prefix reuse between repetitions); probabilities are
 *               compared with fp32's (max |Δp|)
 *   memory      peaks over the row: renderer RSS (the process the worker runs in), worker heap and
 *               ArrayBuffers
 *
 * A format the engine refuses at load time (`model_load_failed`: the device cannot run it) is a row
 * with status 'refused' and the engine's reason. `dtype: auto`'s preference
 * (src/engine/load/dtype-preference.ts) is read from these rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import { chromiumPath } from '../peers/browser.ts';
import { openPage } from './bench-page.ts';
import { round } from './measure.ts';
import { modelBytes } from './model-bytes.ts';
import { ProcessSampler } from '../../scripts/machine/procs.ts';
import { type Device, type FormatResult, median } from './schema.ts';

/** Every dtype the generator writes (scripts/models/linear-formats.ts), fp32 first: the reference. */
export const FORMAT_DTYPES = ['fp32', 'fp16', 'q4', 'q4f16', 'q8'] as const;
export type FormatDtype = (typeof FORMAT_DTYPES)[number];
/** The dtypes of a GQA export (scripts/models/gqa-graph.ts: no q8, as the builder writes none). */
export const GQA_DTYPES: readonly FormatDtype[] = ['fp32', 'fp16', 'q4', 'q4f16'];

export const GQA_SUFFIX = '-gqa';

export interface FormatPlan {
  /** Models (Optimum-style names); each is followed by its `-gqa` sibling when `gqa`. */
  models: string[];
  gqa: boolean;
  device: Device;
  dtypes: readonly FormatDtype[];
  chat: { promptTokens: number; newTokens: number };
  decision: { stateTokens: number; questions: number };
  reps: number;
  threads?: number | undefined;
}

export function formatPlan(o: { quick: boolean; models: string[]; gqa: boolean; dtypes: readonly FormatDtype[]; reps: number | null; threads?: number | undefined }): FormatPlan {
  return {
    models: o.models,
    gqa: o.gqa,
    device: 'wasm',
    dtypes: FORMAT_DTYPES.filter((d) => o.dtypes.includes(d)),
    chat: o.quick ? { promptTokens: 200, newTokens: 16 } : { promptTokens: 380, newTokens: 64 },
    decision: o.quick ? { stateTokens: 64, questions: 4 } : { stateTokens: 512, questions: 4 },
    reps: o.reps ?? (o.quick ? 1 : 3),
    threads: o.threads,
  };
}

const mib = (bytes: number | null) => (bytes === null ? '—' : (bytes / 2 ** 20).toFixed(0));

interface Reference {
  probs: Record<string, number>[];
  text: string;
}

/** Measures every (model, export, dtype) of the plan; `log` gets progress lines. */
export async function runFormats(plan: FormatPlan, site: string, mirror: ModelHost, log: (...a: unknown[]) => void): Promise<FormatResult[]> {
  const rows: FormatResult[] = [];
  for (const base of plan.models) {
    const exports: ['optimum' | 'gqa', string, readonly FormatDtype[]][] = [['optimum', base, plan.dtypes]];
    if (plan.gqa) exports.push(['gqa', `${base}${GQA_SUFFIX}`, plan.dtypes.filter((d) => GQA_DTYPES.includes(d))]);
    // fp32 of the Optimum-style export is the reference of both exports (same weights)
    let reference: Reference | null = null;
    for (const [kind, model, dtypes] of exports) {
      for (const dtype of dtypes) {
        const row = await measureFormat(plan, site, mirror, model, kind, dtype, reference, log);
        if (kind === 'optimum' && dtype === 'fp32' && row.result.status === 'measured') reference = row.reference;
        rows.push(row.result);
        const r = row.result;
        log(
          r.status === 'measured'
            ? `format ${model} ${dtype}: prefill ${r.prefill_tps} tok/s, decode ${r.decode_tps} tok/s, decision ${r.decision_ms} ms, ` +
                `Δp vs fp32 ${r.max_prob_diff_vs_fp32 ?? '—'}, renderer peak ${mib(r.load_peak_rss_bytes)} MiB loading, ${mib(r.serving_peak_rss_bytes)} MiB serving ` +
                `(model ${mib(r.model_bytes)} MiB)`
            : `format ${model} ${dtype}: ${r.status} (${r.reason})`,
        );
      }
    }
  }
  return rows;
}

async function measureFormat(
  plan: FormatPlan,
  site: string,
  mirror: ModelHost,
  model: string,
  kind: 'optimum' | 'gqa',
  dtype: FormatDtype,
  reference: Reference | null,
  log: (...a: unknown[]) => void,
): Promise<{ result: FormatResult; reference: Reference }> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-format-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  const sampler = new ProcessSampler(profile);
  sampler.start();
  const result: FormatResult = {
    device: plan.device,
    model,
    export: kind,
    dtype,
    status: 'measured',
    reason: null,
    bytes: null,
    load_ms: null,
    prompt_tokens: null,
    ttft_ms: null,
    prefill_tps: null,
    new_tokens: null,
    decode_tps: null,
    decision_questions: plan.decision.questions,
    decision_state_tokens: null,
    decision_ms: null,
    max_prob_diff_vs_fp32: null,
    same_text_as_fp32: null,
    renderer_peak_rss_bytes: null,
    load_peak_rss_bytes: null,
    serving_peak_rss_bytes: null,
    model_bytes: modelBytes(mirror.roots, model, dtype),
    worker_js_heap_peak_bytes: null,
    worker_array_buffers_peak_bytes: null,
    reps: plan.reps,
    samples: { ttft_ms: [], decode_tps: [], decision_ms: [] },
  };
  const own: Reference = { probs: [], text: '' };
  const p = await openPage(ctx, site, log);
  try {
    try {
      const loaded = await p.call<{ ms: number; bytes: number }>('load', { model, host: mirror.url, device: plan.device, dtype, threads: plan.threads });
      result.load_ms = round(loaded.ms);
      result.bytes = loaded.bytes;
      result.load_peak_rss_bytes = sampler.mark().rendererRss;
    } catch (e) {
      result.status = 'refused';
      result.reason = firstLine(e);
      return { result, reference: own };
    }
    try {
      await p.call('setupDecisions', 'warmup', 32, 99);
      await p.call('engineDecision', 'warmup', 2);
      const user = await p.call<string>('userText', plan.chat.promptTokens, 7);
      for (let rep = 0; rep < plan.reps; rep++) {
        const messages = [
          { role: 'system', content: `Benchmark run ${rep + 1}. Answer the user.` },
          { role: 'user', content: user },
        ];
        const c = await p.call<{ ttft_ms: number; decode_tps: number | null; prompt_tokens: number; tokens: number; text: string }>('engineChat', messages, plan.chat.newTokens);
        result.samples.ttft_ms.push(round(c.ttft_ms));
        if (c.decode_tps !== null) result.samples.decode_tps.push(round(c.decode_tps, 2));
        result.prompt_tokens = c.prompt_tokens;
        result.new_tokens = c.tokens;
        if (rep === 0) own.text = c.text;
      }
      for (let rep = 0; rep < plan.reps; rep++) {
        const key = `format-${rep}`;
        // the same states for every format (seed by repetition), fresh per repetition: no reuse between them
        const setup = await p.call<{ stateTokens: number }>('setupDecisions', key, plan.decision.stateTokens, 2000 + rep);
        result.decision_state_tokens = setup.stateTokens;
        const d = await p.call<{ ms: number; probs: Record<string, number>[] }>('engineDecision', key, plan.decision.questions);
        result.samples.decision_ms.push(round(d.ms));
        if (rep === 0) own.probs = d.probs;
      }
    } catch (e) {
      result.status = 'failed';
      result.reason = firstLine(e);
    }
    if (result.samples.ttft_ms.length) {
      result.ttft_ms = round(median(result.samples.ttft_ms));
      result.prefill_tps = result.prompt_tokens === null ? null : round((result.prompt_tokens * 1000) / result.ttft_ms, 2);
    }
    if (result.samples.decode_tps.length) result.decode_tps = round(median(result.samples.decode_tps), 2);
    if (result.samples.decision_ms.length) result.decision_ms = round(median(result.samples.decision_ms));
    if (reference && (dtype !== 'fp32' || kind === 'gqa')) {
      result.max_prob_diff_vs_fp32 = maxProbDiff(reference.probs, own.probs);
      result.same_text_as_fp32 = own.text === reference.text;
    }
    await p.heap.sample();
    const heap = p.heap.mark();
    const peaks = sampler.mark();
    result.serving_peak_rss_bytes = peaks.rendererRss;
    result.renderer_peak_rss_bytes = Math.max(result.load_peak_rss_bytes ?? 0, peaks.rendererRss);
    result.worker_js_heap_peak_bytes = heap?.heap ?? null;
    result.worker_array_buffers_peak_bytes = heap?.buffers ?? null;
    await p.call('dispose').catch(() => undefined);
    return { result, reference: own };
  } finally {
    await p.close().catch(() => undefined);
    sampler.stop();
    await ctx.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
}

function maxProbDiff(a: Record<string, number>[], b: Record<string, number>[]): number | null {
  if (!a.length || a.length !== b.length) return null;
  let max = 0;
  a.forEach((pa, i) => {
    for (const [answer, x] of Object.entries(pa)) {
      const y = b[i]?.[answer];
      if (y !== undefined) max = Math.max(max, Math.abs(x - y));
    }
  });
  return Number(max.toExponential(2));
}

function firstLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!.replace(/^Error: /, '');
}
