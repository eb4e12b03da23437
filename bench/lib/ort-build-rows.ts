/**
 * `npm run bench -- --only ort-builds`: onnxruntime-web's JSPI build against its asyncify build,
 * side by side in one run, on the engine's own load and forward passes (bench/page/bench.worker.ts).
 *
 * For each (model, dtype, threads): two pages of one browser, each with its worker and engine, one
 * forced to each build (`RuntimeConfig.ortBuild`); both load the model; then prefill (a prompt of
 * ~400 tokens, one pass and the first pick) and decode (63 single-token passes, each with the
 * log-softmax and the greedy pick, as the peer rows do) alternate between them, A B, B A, … so that
 * other load on the machine hits both alike. Per decode step, the time inside the session's run and
 * the time outside it (step-time.ts). What decides src/engine/runtime/ort-build.ts's default.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import type { OrtBuild } from '../../src/engine/runtime/ort-build.ts';
import { chromiumPath } from '../peers/browser.ts';
import { sleep, waitForQuiet } from '../peers/quiet.ts';
import { type BenchPage, openPage } from './bench-page.ts';
import { round } from './measure.ts';
import { median, type OrtBuildRow, type OrtBuildSide } from './schema.ts';
import type { DecodeSteps } from './step-time.ts';

export type { OrtBuildRow, OrtBuildSide };

export const ORT_BUILD_NAMES: readonly OrtBuild[] = ['jspi', 'asyncify'];

export interface OrtBuildPlan {
  models: string[];
  dtypes: ('fp32' | 'q8')[];
  threads: number[];
  reps: number;
  promptTokens: number;
  decodeTokens: number;
  /** Wait (up to 30 s) before each measurement for the 1-minute load average to drop below this; undefined: no wait. */
  maxLoad?: number | undefined;
}

/** The plan for `--only ort-builds`: the models named (default both), fp32 and q8 where asked, 1 and the machine's threads unless one count is named. */
export function ortBuildPlan(o: { models: string[] | null; dtypes: readonly string[]; threads: number | undefined; reps: number | null; quick: boolean; maxLoad?: number | undefined }, defaults: { models: string[]; cores: number }): OrtBuildPlan {
  const dtypes = (['fp32', 'q8'] as const).filter((d) => o.dtypes.includes(d));
  return {
    models: o.models ?? defaults.models,
    dtypes: dtypes.length ? [...dtypes] : ['fp32'],
    threads: o.threads ? [o.threads] : [...new Set([1, Math.max(1, defaults.cores)])],
    reps: o.reps ?? (o.quick ? 2 : 5),
    promptTokens: 400,
    decodeTokens: o.quick ? 16 : 64,
    maxLoad: o.maxLoad,
  };
}

/** Whether a model has the ONNX file of a dtype (TinyStories-656K has fp32 only). */
export type HasDtype = (model: string, dtype: string) => boolean;

type Bench = { prompt_tokens: number; prefill_ms: number; decode_ms: number } & DecodeSteps;

export async function measureOrtBuilds(
  plan: OrtBuildPlan,
  site: string,
  mirror: ModelHost,
  hasDtype: HasDtype,
  log: (...a: unknown[]) => void,
  notes: string[],
): Promise<{ rows: OrtBuildRow[]; userAgent: string | null; chromium: string | null }> {
  const rows: OrtBuildRow[] = [];
  let userAgent: string | null = null;
  let fullVersion: string | null = null;
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-ort-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    for (const model of plan.models) {
      for (const dtype of plan.dtypes) {
        if (!hasDtype(model, dtype)) {
          notes.push(`ort-builds: ${model} has no ${dtype} file; not measured.`);
          continue;
        }
        for (const threads of plan.threads) {
          try {
            const row = await measureOne(ctx, site, mirror, model, dtype, threads, plan, log, (ua, full) => {
              userAgent ??= ua;
              fullVersion ??= full;
            });
            rows.push(row);
            log(
              `ort-builds ${model} ${dtype} ×${threads}: decode jspi ${row.jspi.decode_tps} / asyncify ${row.asyncify.decode_tps} tok/s (${row.decode_ratio}×; ` +
                `typical step ${row.jspi.decode_tps_median_step} / ${row.asyncify.decode_tps_median_step} tok/s, ${row.decode_ratio_median_step}×), ` +
                `prefill ${row.jspi.prefill_tps} / ${row.asyncify.prefill_tps} tok/s (${row.prefill_ratio}×); outside the graph per step ${row.jspi.outside_ms} / ${row.asyncify.outside_ms} ms`,
            );
          } catch (e) {
            const note = `ort-builds ${model} ${dtype} ×${threads}: not measured (${(e as Error).message.split('\n')[0]})`;
            log(note);
            notes.push(note);
          }
        }
      }
    }
  } finally {
    await ctx.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
  return { rows, userAgent, chromium: fullVersion };
}

async function measureOne(
  ctx: import('playwright-core').BrowserContext,
  site: string,
  mirror: ModelHost,
  model: string,
  dtype: string,
  threads: number,
  plan: OrtBuildPlan,
  log: (...a: unknown[]) => void,
  seeUserAgent: (ua: string, chromium: string | null) => void,
): Promise<OrtBuildRow> {
  const pages = new Map<OrtBuild, BenchPage>();
  const loads = new Map<OrtBuild, { ms: number; build: OrtBuild | null }>();
  let ctxLen = 2048;
  try {
    for (const build of ORT_BUILD_NAMES) {
      const p = await openPage(ctx, site, log);
      pages.set(build, p);
      const r = await p.call<{ ms: number; ortBuild: OrtBuild | null; userAgent: string; chromium: string | null; status: { threads: number | null; contextLength: number | null } }>('load', {
        model,
        host: mirror.url,
        device: 'wasm',
        dtype,
        threads,
        ortBuild: build,
      });
      seeUserAgent(r.userAgent, r.chromium);
      if (r.status.threads !== threads) throw new Error(`${build}: the engine runs ${r.status.threads} threads, asked for ${threads}`);
      if (r.ortBuild !== build) log(`ort-builds: asked for ${build}, the engine loaded ${r.ortBuild}`);
      loads.set(build, { ms: r.ms, build: r.ortBuild });
      ctxLen = r.status.contextLength ?? ctxLen;
    }
    const first = pages.get('jspi')!;
    const promptTokens = Math.min(plan.promptTokens, ctxLen - plan.decodeTokens - 8);
    const ids = await first.call<number[]>('promptIds', promptTokens, 5);
    // warm-up: the first passes allocate onnxruntime's arenas and compile kernels
    for (const p of pages.values()) await p.call('decodeBench', ids.slice(0, 32), 4);
    const samples = new Map<OrtBuild, Bench[]>(ORT_BUILD_NAMES.map((b) => [b, []]));
    const loadavg: number[] = [];
    for (let rep = 0; rep < plan.reps; rep++) {
      const order = rep % 2 === 0 ? ORT_BUILD_NAMES : [...ORT_BUILD_NAMES].reverse();
      for (const build of order) {
        await sleep(300);
        loadavg.push(await waitForQuiet(plan.maxLoad, 30_000));
        const b = await pages.get(build)!.call<Bench>('decodeBench', ids, plan.decodeTokens);
        samples.get(build)!.push(b);
        log(
          `  ${model} ${dtype} ×${threads} rep ${rep + 1}/${plan.reps} ${build}: prefill ${((b.prompt_tokens * 1000) / b.prefill_ms).toFixed(1)} tok/s, ` +
            `decode ${b.decode_tps.toFixed(1)} tok/s (step median ${b.step_ms_median} ms, p90 ${b.step_ms_p90}, max ${b.step_ms_max}; outside the run ${b.outside_ms_median} ms)`,
        );
      }
    }
    const side = (build: OrtBuild): OrtBuildSide => {
      const xs = samples.get(build)!;
      const s = {
        prefill_tps: xs.map((x) => round((x.prompt_tokens * 1000) / x.prefill_ms, 1)),
        decode_tps: xs.map((x) => round(x.decode_tps, 1)),
        step_ms: xs.map((x) => x.step_ms_median),
        step_ms_p90: xs.map((x) => x.step_ms_p90),
        step_ms_max: xs.map((x) => x.step_ms_max),
        run_ms: xs.map((x) => x.run_ms_median),
        outside_ms: xs.map((x) => x.outside_ms_median),
      };
      return {
        build: loads.get(build)!.build,
        load_ms: round(loads.get(build)!.ms),
        prefill_tps: round(median(s.prefill_tps), 1),
        decode_tps: round(median(s.decode_tps), 1),
        decode_tps_median_step: round(median(xs.map((x) => x.decode_tps_median_step)), 1),
        best_decode_tps: Math.max(...s.decode_tps),
        best_prefill_tps: Math.max(...s.prefill_tps),
        step_ms: round(median(s.step_ms), 3),
        step_ms_max: round(median(s.step_ms_max), 3),
        run_ms: round(median(s.run_ms), 3),
        outside_ms: round(median(s.outside_ms), 3),
        samples: s,
      };
    };
    const jspi = side('jspi');
    const asyncify = side('asyncify');
    return {
      model,
      dtype,
      device: 'wasm',
      threads,
      prompt_tokens: ids.length,
      decode_steps: plan.decodeTokens - 1,
      reps: plan.reps,
      jspi,
      asyncify,
      decode_ratio: round(jspi.decode_tps / asyncify.decode_tps, 2),
      decode_ratio_median_step: round(jspi.decode_tps_median_step / asyncify.decode_tps_median_step, 2),
      prefill_ratio: round(jspi.prefill_tps / asyncify.prefill_tps, 2),
      loadavg_per_run: loadavg,
    };
  } finally {
    for (const p of pages.values()) {
      await p.call('dispose').catch(() => undefined);
      await p.close().catch(() => undefined);
    }
  }
}
