/**
 * The `load_visits` rows (`npm run bench -- --only load`; docs/benchmarks.md, "Where a load goes"):
 * an app's page (bench/page/load.html) that makes the library's client at start-up, timed from
 * `createClient()` to ready and to its first answer (one decision), with the engine's breakdown
 * (`status().lastLoad`) and the renderers' peak resident memory until ready and until that answer. Each model and
 * dtype gets a fresh persistent profile (Playwright's `launchPersistentContext`, so that the
 * browser's HTTP, Cache API and V8 code caches are what a real user's are): its first visit reads
 * every file from the mirror, then the page is opened again `returns` times in the same tab, each a
 * return visit (a reload), then `returns` times after the tab has been elsewhere for 2 s, each a
 * fresh visit (a new renderer process: measured, a reload's renderer still holds much of the visit
 * before, docs/benchmarks.md).
 * Beside each, llama.cpp in the app's place (wllama, bench/page/wllama-load.ts) on the GGUF of the
 * same weights, through wllama's own model cache, in a profile of its own: the peer the issue's
 * targets are set against. And transformers.js' own `text-generation` pipeline, made in a worker
 * at start-up on the same ONNX file (bench/page/pipeline-load.ts), through its own browser cache,
 * also in a profile of its own: what an app gets from the library the engine is built on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import { browserTree } from '../../scripts/machine/procs.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import type { LastLoad } from '../../src/protocol/engine-api.ts';
import { chromiumPath } from '../peers/browser.ts';
import type { LoadVisit, LoadVisitResult } from './schema-load-rows.ts';
import { ggufFile, PEER_DTYPES, PEER_MODELS, peerModel, type PeerDtype } from '../peers/models.ts';

export interface LoadVisitPlan {
  model: string;
  dtypes: string[];
  /** Return visits after the first. */
  returns: number;
  /** wllama's and the transformers.js pipeline's visits of the same weights beside the engine's (`--no-peers` leaves them out). */
  peers: boolean;
  /** Threads for both (`--threads N`: the client's `threads` option, wllama's `n_threads`); null: the engine's default (one per core), and wllama as many. */
  threads: number | null;
}

interface PageReport {
  navigationMs: number;
  readyMs: number;
  answerMs: number;
  lastLoad: LastLoad | null;
  threads: number | null;
  crossOriginIsolated: boolean;
}

/**
 * Opens the page and waits for its first answer, sampling the renderers' resident memory every
 * 100 ms meanwhile: the highest sample of the whole visit (`peak`), and the highest taken before
 * the page was ready (`loadPeak`: samples timed from the navigation's start, against the page's
 * `navigationMs + readyMs` on its own clock, which starts with that navigation).
 */
async function visit(page: Page, url: string, profile: string): Promise<{ report: PageReport; peak: number | null; loadPeak: number | null }> {
  const samples: { at: number; rss: number }[] = [];
  const t0 = performance.now();
  const sample = () => {
    const rss = browserTree(profile).filter((p) => p.type === 'renderer').reduce((s, p) => s + p.rss, 0);
    if (rss > 0) samples.push({ at: performance.now() - t0, rss });
  };
  const timer = setInterval(sample, 100);
  try {
    await page.goto(url);
    await page.waitForFunction(() => (window as unknown as { jevLoad?: unknown }).jevLoad);
    const report = await page.evaluate(() => (window as unknown as { jevLoad: Promise<PageReport> }).jevLoad);
    sample();
    const highest = (xs: { rss: number }[]) => (xs.length ? Math.max(...xs.map((x) => x.rss)) : null);
    return { report, peak: highest(samples), loadPeak: highest(samples.filter((x) => x.at <= report.navigationMs + report.readyMs)) };
  } finally {
    clearInterval(timer);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The GGUF of the same weights as the engine's `dtype` file, on the mirror; null where the model has none. */
function ggufOnMirror(model: string, dtype: string, mirror: ModelHost): string | null {
  if (!(PEER_DTYPES as readonly string[]).includes(dtype) || !(model in PEER_MODELS)) return null;
  const m = peerModel(model);
  if (!m.dtypes.includes(dtype as PeerDtype)) return null;
  return `${mirror.url}/${model}/resolve/main/${ggufFile(m, dtype as PeerDtype)}`;
}

/**
 * `JEV_LOAD_TRACE=first|return|fresh:FILE` (a local investigation, unset in CI): Chromium's trace
 * (timeline, V8 and wasm compile categories) of the last visit of that kind, per runtime and dtype,
 * written to `FILE.<runtime and dtype>.<kind>.json` (the trace events: open it in Perfetto, or sum
 * the events per thread; docs/benchmarks.md, "Where a load goes").
 */
const TRACE = (() => {
  const m = /^(first|return|fresh):(.+)$/.exec(process.env['JEV_LOAD_TRACE'] ?? '');
  return m ? { kind: m[1] as LoadVisit['visit'], file: m[2]! } : null;
})();

async function startTrace(ctx: BrowserContext, page: Page): Promise<() => Promise<unknown[]>> {
  const cdp = await ctx.newCDPSession(page);
  const events: unknown[] = [];
  cdp.on('Tracing.dataCollected', (e: { value: unknown[] }) => void events.push(...e.value));
  const categories = ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'blink', 'loading', 'v8', 'v8.wasm', 'disabled-by-default-v8.compile'];
  await cdp.send('Tracing.start', { traceConfig: { includedCategories: categories }, transferMode: 'ReportEvents' });
  return async () => {
    const complete = new Promise((resolve) => cdp.once('Tracing.tracingComplete', resolve));
    await cdp.send('Tracing.end');
    await complete;
    await cdp.detach();
    return events;
  };
}

const mibOf = (bytes: number | null) => (bytes === null ? '?' : String(Math.round(bytes / 2 ** 20)));

/** How long the tab stays on `about:blank` before a fresh visit. */
const FRESH_AFTER_MS = 2000;

/** One runtime's visits of its page in a fresh persistent profile: the first visit, then `returns` return visits (reloads), then `returns` fresh visits. */
async function profileVisits(url: string, returns: number, label: string, log: (...a: unknown[]) => void): Promise<{ visits: LoadVisit[]; facts: PageReport | null }> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-load-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    page.setDefaultTimeout(0);
    page.on('pageerror', (e) => log(`${label} page error:`, e.message));
    const visits: LoadVisit[] = [];
    let facts: PageReport | null = null;
    for (let i = 0; i <= 2 * returns; i++) {
      const kind: LoadVisit['visit'] = i === 0 ? 'first' : i <= returns ? 'return' : 'fresh';
      if (kind === 'fresh') {
        await page.goto('about:blank');
        await new Promise((resolve) => setTimeout(resolve, FRESH_AFTER_MS));
      }
      // A local investigation (unset in CI): the browser's trace of the last visit of one kind.
      const traced = TRACE && TRACE.kind === kind && i === (kind === 'fresh' ? 2 * returns : kind === 'return' ? returns : 0);
      const tracing = traced ? await startTrace(ctx, page) : null;
      const { report, peak, loadPeak } = await visit(page, url, profile);
      if (tracing) writeFileSync(`${TRACE!.file}.${label.replace(/[^\w.-]+/g, '-')}.${kind}.json`, JSON.stringify(await tracing()));
      facts = report;
      const v: LoadVisit = {
        visit: kind,
        index: i,
        ready_ms: report.readyMs,
        first_answer_ms: report.answerMs,
        navigation_ms: report.navigationMs,
        peak_renderers_rss_bytes: peak,
        load_peak_renderers_rss_bytes: loadPeak,
        last_load: report.lastLoad,
      };
      visits.push(v);
      log(`load ${label} ${v.visit} visit: ready ${Math.round(v.ready_ms)} ms, first answer ${Math.round(v.first_answer_ms)} ms, peak ${mibOf(loadPeak)} MiB to ready, ${mibOf(peak)} MiB to the answer`);
    }
    return { visits, facts };
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * Per dtype: the engine's visits (its own profile), then, where the plan asks for peers, wllama's on
 * the GGUF of the same weights where the model has one, and the transformers.js pipeline's on the
 * same ONNX file (each in a profile of its own, with the engine's threads), each a row.
 */
export async function measureLoadVisits(plan: LoadVisitPlan, site: string, mirror: ModelHost, log: (...a: unknown[]) => void): Promise<LoadVisitResult[]> {
  const rows: LoadVisitResult[] = [];
  const row = (runtime: LoadVisitResult['runtime'], dtype: string, visits: LoadVisit[], facts: PageReport | null, start: number): LoadVisitResult => {
    const spread = (kind: LoadVisit['visit']) => {
      const ready = visits.filter((v) => v.visit === kind).map((v) => v.ready_ms);
      return ready.length ? { median: median(ready), min: Math.min(...ready), max: Math.max(...ready) } : null;
    };
    return {
      runtime,
      model: plan.model,
      device: 'wasm',
      dtype,
      threads: facts?.threads ?? null,
      cross_origin_isolated: facts?.crossOriginIsolated ?? false,
      visits,
      return_ready_ms: spread('return'),
      fresh_ready_ms: spread('fresh'),
      load_average: { start, end: loadavg()[0]! },
    };
  };
  for (const dtype of plan.dtypes) {
    let start = loadavg()[0]!;
    const url = `${site}/load.html?model=${encodeURIComponent(plan.model)}&host=${encodeURIComponent(mirror.url)}&dtype=${dtype}${plan.threads ? `&threads=${plan.threads}` : ''}`;
    const engine = await profileVisits(url, plan.returns, `${plan.model} ${dtype}`, log);
    rows.push(row('engine', dtype, engine.visits, engine.facts, start));
    if (!plan.peers) continue;
    const threads = engine.facts?.threads ?? 0;
    const gguf = ggufOnMirror(plan.model, dtype, mirror);
    if (gguf) {
      start = loadavg()[0]!;
      const peer = await profileVisits(`${site}/wllama-load.html?url=${encodeURIComponent(gguf)}&threads=${threads}`, plan.returns, `${plan.model} ${dtype} wllama`, log);
      rows.push(row('wllama', dtype, peer.visits, peer.facts, start));
    }
    start = loadavg()[0]!;
    const pipelineUrl = `${site}/pipeline-load.html?model=${encodeURIComponent(plan.model)}&host=${encodeURIComponent(mirror.url)}&dtype=${dtype}&threads=${threads}`;
    const pipe = await profileVisits(pipelineUrl, plan.returns, `${plan.model} ${dtype} pipeline`, log);
    rows.push(row('pipeline', dtype, pipe.visits, pipe.facts, start));
  }
  return rows;
}
