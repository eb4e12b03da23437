/**
 * `npm run soak -- --minutes M [--requests N] [--seed S] [--reload-every R] [--sample-every K]
 * [--warmup W] [--bound B] [--json FILE] [--svg FILE] [--app DIR] [--replot FILE]`: one engine, a mixed request
 * stream (mix.ts) for M minutes (or N requests), in Chromium on the built playground
 * (dist-soak/, built when stale, or --app) with the generated tiny-random-llama, Chromium driven
 * over a DevTools pipe (pipe-browser.ts: Playwright's network tracking would grow the renderer).
 *
 * Every K requests it reads the renderer's RSS, the engine worker's JS heap after a GC
 * (memory.ts; every `--snapshot-every` requests, its objects without V8's compiled code), the wasm heap, the tensor ledger and the prefix cache's bytes (the engine's
 * status). Exits 1 when, after the warm-up (request W), a figure rises past B (5 %) of its level
 * there, when a tensor beyond the prefix cache's is live between two requests, or when a request is
 * answered wrong. Writes the samples as JSON and their curve as SVG (chart.ts).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { CHROMIUM_ARGS, chromiumPath } from '../machine/chromium.ts';
import { startModelHost } from '../../e2e/support/model-host.ts';
import { startStatic } from '../../e2e/support/static-server.ts';
import { buildHarness } from '../../e2e/reliability-support.ts';
import { browserVersion, commitId, machineDescription } from '../machine/machine.ts';
import { buildApp, isStale, REPO } from '../eval/app-build.ts';
import { generateModels } from '../models/generate-models.ts';
import { GENERATED, MODEL_ROOTS } from '../models/roots.ts';
import { judge, type Drift, type Sample } from './drift.ts';
import { soakChart } from './chart.ts';
import { memoryReader } from './memory.ts';
import { openPipePage } from './pipe-browser.ts';
import type { StepResult, StepKind } from './mix.ts';

const MODEL = 'tiny-random-llama';
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    requests: { type: 'string', default: String(Number.MAX_SAFE_INTEGER) },
    seed: { type: 'string', default: '20261126' },
    'reload-every': { type: 'string', default: '300' },
    'sample-every': { type: 'string', default: '25' },
    'snapshot-every': { type: 'string', default: '500' },
    warmup: { type: 'string', default: '100' },
    bound: { type: 'string', default: '0.05' },
    json: { type: 'string', default: 'bench-results/soak.json' },
    svg: { type: 'string', default: 'bench-results/soak.svg' },
    app: { type: 'string' },
    replot: { type: 'string' },
  },
});
const num = (name: keyof typeof values) => {
  const v = Number(values[name]);
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number ≥ 0, got ${values[name]}`);
  return v;
};
const minutes = num('minutes');
const maxRequests = num('requests');
const seed = num('seed');
const reloadEvery = num('reload-every');
const sampleEvery = Math.max(1, num('sample-every'));
const snapshotEvery = Math.max(sampleEvery, num('snapshot-every'));
const warmup = num('warmup');
const bound = num('bound');
const log = (line: string) => console.log(`[soak] ${line}`);

const chartOf = (r: { samples: Sample[]; requests: number; minutes: number; reloads: number[] }, drift: Drift[]) =>
  soakChart(r.samples, {
    title: `npm run soak: ${r.requests} requests in ${r.minutes.toFixed(1)} min, ${MODEL} on wasm, Chromium`,
    warmup,
    bound,
    reloads: r.reloads,
    levels: Object.fromEntries(drift.map((d) => [d.figure, d.level])),
  });
// --replot FILE: the verdict and the curve again from a run's JSON, without running anything.
if (values.replot) {
  const saved = JSON.parse(readFileSync(values.replot, 'utf8')) as { samples: Sample[]; requests: number; minutes: number; reloads: number[] };
  const again = judge(saved.samples, { warmup, bound });
  writeFileSync(values.svg, chartOf(saved, again.drift));
  log(`${values.replot}: ${again.ok ? 'passed' : `${again.problems.length} problem(s)`}; wrote ${values.svg}`);
  process.exit(again.ok ? 0 : 1);
}

await generateModels({ only: MODEL, outDir: GENERATED });
const app = values.app ?? join(REPO, 'dist-soak');
if (!values.app && isStale(app)) await buildApp(app, log);
const mirror = await startModelHost(MODEL_ROOTS, 0);
const server = await startStatic(app, 0);
const load = { model: MODEL, host: mirror.url, device: 'wasm', dtype: 'fp32' };
const executable = chromiumPath();
if (!executable) throw new Error('no Chromium: set CHROMIUM_PATH (the soak drives it over a DevTools pipe, without Playwright)');
const page = await openPipePage(executable, CHROMIUM_ARGS, `${server.url}/?${new URLSearchParams(load)}`);
await page.waitFor('window.jev');
await page.evaluate('window.jev.ready.then(() => true)');
await page.waitFor('navigator.serviceWorker.controller');
await page.evaluate(readFileSync(await buildHarness(), 'utf8'));
const read = memoryReader(page.probe);
const pageErrors = page.errors;
// Between requests the engine holds its prefix cache only: one tensor per past key and value of each layer, per entry.
const layers = (JSON.parse(readFileSync(join(GENERATED, MODEL, 'config.json'), 'utf8')) as { num_hidden_layers: number }).num_hidden_layers;
const perEntry = 2 * layers;

const samples: Sample[] = [];
const wrong: string[] = [];
const kinds: Partial<Record<StepKind, number>> = {};
const reloads: number[] = [];
let stray = 0;
let last: StepResult | null = null;
const started = Date.now();
let i = 0;
log(`${minutes} min (at most ${maxRequests === Number.MAX_SAFE_INTEGER ? '∞' : maxRequests} requests), seed ${seed}, a reload every ${reloadEvery}, a sample every ${sampleEvery}`);
while (i < maxRequests && Date.now() - started < minutes * 60_000 && pageErrors.length === 0) {
  const to = Math.min(maxRequests, i + sampleEvery);
  const steps = await page.evaluate<StepResult[]>(`window.jevReliability.soak.soakSteps({ jev: window.jev, fetch: window.fetch.bind(window), load: ${JSON.stringify(load)}, reloadEvery: ${reloadEvery}, seed: ${seed} }, ${i}, ${to})`);
  for (const s of steps) {
    kinds[s.kind] = (kinds[s.kind] ?? 0) + 1;
    if (s.kind === 'reload') reloads.push(s.i);
    if (s.wrong) wrong.push(`request ${s.i} (${s.kind} via ${s.via}): ${s.wrong}`);
    stray = Math.max(stray, s.live - s.cacheEntries * perEntry);
    if (s.live !== s.cacheEntries * perEntry) wrong.push(`after request ${s.i}: ${s.live} live tensors, the prefix cache's ${s.cacheEntries} entries hold ${s.cacheEntries * perEntry}`);
  }
  last = steps.at(-1) ?? last;
  i = to;
  // The prefix cache grows up to its byte budget by design (its bytes are recorded): it is emptied
  // before each reading, so that what is compared is what a leak would leave, and no tensor may then be live.
  const liveAfterClear = await page.evaluate<number>('window.jev.cache.clear().then(() => window.jev.status()).then((s) => s.counters.liveTensors)');
  const m = await read();
  // The worker's objects without compiled code, from a heap snapshot: at the warm-up's end and every snapshotEvery requests after it.
  const snapshot = i >= warmup && (i - warmup) % snapshotEvery === 0 && page.probe.workerObjects;
  const workerObjects = snapshot ? await snapshot() : null;
  samples.push({ i, t: (Date.now() - started) / 1000, ...m, workerObjects, wasmHeap: last?.wasmHeap ?? null, cacheBytes: last?.cacheBytes ?? 0, cacheEntries: last?.cacheEntries ?? 0, strayTensors: last ? last.live - last.cacheEntries * perEntry : 0, liveAfterClear });
  if (samples.length % 20 === 0) log(`${i} requests, ${((Date.now() - started) / 60_000).toFixed(1)} min: renderer ${(m.rendererRss / 2 ** 20).toFixed(1)} MiB (private ${(m.rendererAnon / 2 ** 20).toFixed(1)}, files ${(m.rendererFile / 2 ** 20).toFixed(1)}, shared ${(m.rendererShmem / 2 ** 20).toFixed(1)}), page heap ${((m.pageHeap ?? 0) / 2 ** 20).toFixed(2)} MiB, service worker heap ${((m.swHeap ?? 0) / 2 ** 20).toFixed(2)} MiB, worker heap ${(m.workerHeap / 2 ** 20).toFixed(2)} MiB, wasm ${((last?.wasmHeap ?? 0) / 2 ** 20).toFixed(1)} MiB`);
}
const verdict = judge(samples, { warmup, bound });
const problems = [...pageErrors, ...wrong, ...verdict.problems];
if (verdict.checkedRequests < 1000) log(`note: ${verdict.checkedRequests} requests after the warm-up; the bound is meant over at least 1,000 (run longer)`);
const report = {
  machine: machineDescription(),
  browser: browserVersion(chromiumPath()),
  commit: commitId(REPO),
  model: MODEL,
  device: 'wasm',
  minutes: (Date.now() - started) / 60_000,
  requests: i,
  seed,
  reloadEvery,
  kinds,
  prefixCache: { hits: last?.hits ?? 0, misses: last?.misses ?? 0 },
  reloads,
  strayTensorsMax: stray,
  verdict: { ...verdict, problems: problems.slice(0, 50), problemCount: problems.length, ok: problems.length === 0 },
  samples,
};
for (const [file, text] of [
  [values.json, JSON.stringify(report, null, 1) + '\n'],
  [values.svg, chartOf(report, verdict.drift)],
] as const) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
await page.close().catch(() => undefined);
await server.close().catch(() => undefined);
await mirror.close().catch(() => undefined);
for (const d of verdict.drift) log(`${d.figure}${d.bounded ? '' : ' (reported, not bounded)'}: level ${(d.level / 2 ** 20).toFixed(2)} MiB at request ${verdict.levelAt}; after it ${(d.min * 100).toFixed(2)} % … +${(d.max * 100).toFixed(2)} % (highest at request ${d.maxAt})`);
log(`${i} requests (${JSON.stringify(kinds)}), prefix cache ${report.prefixCache.hits} hits / ${report.prefixCache.misses} misses, ${reloads.length} reloads, stray tensors at most ${stray}; wrote ${values.json} and ${values.svg}`);
if (problems.length) {
  console.error(`[soak] FAILED: ${problems.length} problem(s):\n${problems.slice(0, 20).join('\n')}`);
  process.exit(1);
}
log('passed');
process.exit(0);
