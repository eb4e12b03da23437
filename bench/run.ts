/**
 * `npm run bench -- --json FILE [--quick] [--webgpu] [--models a,b] [--threads N] [--md FILE | --no-md]`
 *                 [--dtypes fp32,fp16,q4,q4f16,q8] [--no-grid] [--no-formats] [--no-gqa] [--no-peers] [--peer-reps N] [--no-logits]
 * (and, for short investigative runs, `--states 64,512` and `--reps N`)
 *
 * Besides the decision and chat grid (fp32), it measures every ONNX format of the generated
 * SmolLM2-shaped model on wasm, its GQA export beside the Optimum-style one (bench/lib/formats.ts),
 * and the wllama peer at fp32, q4 and q8 on GGUFs of the same weights (bench/peers). `--dtypes`
 * selects the formats of both; `--models tiny-random-llama` runs the format rows and the peer on the
 * tiny model alone (a smoke run of the plumbing).
 *
 * Runs the engine and the transformers.js baselines side by side in headless Chromium, on the
 * same loaded model, and writes the results as JSON (schema: docs/benchmarks.md) and as the
 * tables and chart of docs/benchmarks.md. Benchmarks are not tests: nothing here asserts a time.
 */
import { modelBytes } from './lib/model-bytes.ts';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { startModelHost, type ModelHost } from '../e2e/support/model-host.ts';
import { generateModels } from '../scripts/models/generate-models.ts';
import { GENERATED, MODEL_ROOTS, REPO, VENDORED } from '../scripts/models/roots.ts';
import { browserVersion, commitId, machineDescription } from './lib/machine.ts';
import { makePlan, SMOL, TINYSTORIES, type TargetPlan } from './lib/plan.ts';
import { loadAverage, ProcessSampler } from './lib/procs.ts';
import { renderChart, renderResults, updateDocument } from './lib/report.ts';
import {
  type BenchResult,
  type ChatResult,
  type DecisionResult,
  type LoadResult,
  type MemoryResult,
  type PrefixCacheResult,
  type PrefixChatResult,
  type TargetResult,
} from './lib/schema.ts';
import { FORMAT_DTYPES, type FormatDtype, GQA_SUFFIX, formatPlan, runFormats } from './lib/formats.ts';
import { buildPage } from './lib/serve.ts';
import { startStatic } from '../e2e/support/static-server.ts';
import { type BenchPage, openPage } from './lib/bench-page.ts';
import { measurePrefixCache } from './lib/prefix-cache-rows.ts';
import { measureDecisions } from './lib/decision-rows.ts';
import { measureChat } from './lib/chat-rows.ts';
import { fmt, mib, round, type Timed } from './lib/measure.ts';
import { BIG_VOCABULARY_MODEL, measureLogitsBound } from './lib/logits-rows.ts';
import { CHROMIUM_ARGS } from '../e2e/support/env.ts';
import { chromiumPath, launchChromium } from './peers/browser.ts';
import { checkModels, summarize } from './peers/check-wllama.ts';
import { PEER_DTYPES, type PeerDtype, peerModel } from './peers/models.ts';
import { runWllamaPeers } from './peers/wllama-peer.ts';

/** The generated Llama models with every format (and quantized GGUFs). */
const FORMAT_MODELS = [SMOL, 'tiny-random-llama'];

interface Options {
  json: string;
  md: string | null;
  quick: boolean;
  webgpu: boolean;
  models: string[] | null;
  threads: number | undefined;
  states: number[] | null;
  reps: number | null;
  peers: boolean;
  peerReps: number | null;
  dtypes: FormatDtype[];
  formats: boolean;
  gqa: boolean;
  /** The decision / chat grid against the baselines (off: format rows and peers only). */
  grid: boolean;
  /** The logits-bound memory rows on a big-vocabulary model (bench/lib/logits-rows.ts). */
  logits: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { json: '', md: join(REPO, 'docs/benchmarks.md'), quick: false, webgpu: false, models: null, threads: undefined, states: null, reps: null, peers: true, peerReps: null, dtypes: [...FORMAT_DTYPES], formats: true, gqa: true, grid: true, logits: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--json') o.json = value();
    else if (a === '--md') o.md = value();
    else if (a === '--no-md') o.md = null;
    else if (a === '--quick') o.quick = true;
    else if (a === '--webgpu') o.webgpu = true;
    else if (a === '--models') o.models = value().split(',');
    else if (a === '--threads') o.threads = Number(value());
    else if (a === '--states') o.states = value().split(',').map(Number);
    else if (a === '--reps') o.reps = Number(value());
    else if (a === '--no-peers') o.peers = false;
    else if (a === '--peer-reps') o.peerReps = Number(value());
    else if (a === '--dtypes') {
      o.dtypes = value().split(',') as FormatDtype[];
      const bad = o.dtypes.filter((d) => !FORMAT_DTYPES.includes(d));
      if (bad.length) throw new Error(`--dtypes: unknown ${bad.join(', ')}; known: ${FORMAT_DTYPES.join(', ')}`);
    } else if (a === '--no-formats') o.formats = false;
    else if (a === '--no-gqa') o.gqa = false;
    else if (a === '--no-grid') o.grid = false;
    else if (a === '--no-logits') o.logits = false;
    else if (a === '--help' || a === '-h') {
      console.log(
        'usage: npm run bench -- --json FILE [--quick] [--webgpu] [--models smollm2-135m-random,TinyStories-656K,tiny-random-llama] [--threads N] ' +
          '[--states 64,512] [--reps N] [--dtypes fp32,fp16,q4,q4f16,q8] [--no-grid] [--no-formats] [--no-gqa] [--no-peers] [--peer-reps N] [--no-logits] [--md FILE | --no-md]',
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!o.json) o.json = join(REPO, 'bench-results', `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  return o;
}

const log = (...a: unknown[]) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

interface TargetOutput {
  decisions: DecisionResult[];
  chat: ChatResult | null;
  prefixCache: PrefixCacheResult[];
  prefixChat: PrefixChatResult | null;
  load: LoadResult;
  memory: MemoryResult[];
  threads: number | null;
  isolated: boolean;
  adapter: string | null;
}

async function runTarget(plan: TargetPlan, site: string, mirror: ModelHost, options: Options, notes: string[]): Promise<TargetOutput> {
  const executablePath = chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-profile-'));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath, headless: true, args: CHROMIUM_ARGS });
  const sampler = new ProcessSampler(profile);
  sampler.start();
  const memory: MemoryResult[] = [];
  const base = { device: plan.device, model: plan.model, dtype: plan.dtype, model_bytes: modelBytes(MODEL_ROOTS, plan.model, plan.dtype) };
  const loadOptions = { model: plan.model, host: mirror.url, device: plan.device, dtype: plan.dtype, threads: options.threads };
  try {
    // ---- load: cold (empty profile: over the network from the mirror), then warm (Cache Storage)
    let p = await openPage(ctx, site, log);
    const info = await p.call<{ crossOriginIsolated: boolean }>('info');
    const adapter = plan.device === 'webgpu' ? await p.call<string | null>('adapter') : null;
    sampler.mark();
    const before = mirror.requests.length;
    const cold = await p.call<{ ms: number; bytes: number; status: { threads: number | null; contextLength: number | null } }>('load', loadOptions);
    const coldFetches = mirror.requests.slice(before).filter((r) => r.startsWith('GET ') && r.endsWith('.onnx')).length;
    await p.heap.sample();
    memory.push(await phaseMemory(base, 'load', sampler, p));
    log(`${plan.model} ${plan.device}: cold load ${(cold.ms / 1000).toFixed(1)} s (${(cold.bytes / 2 ** 20).toFixed(0)} MiB, ${coldFetches} onnx fetch)`);
    await p.close();

    p = await openPage(ctx, site, log);
    const mark = mirror.requests.length;
    const warm = await p.call<{ ms: number }>('load', loadOptions);
    const warmFetches = mirror.requests.slice(mark).filter((r) => r.startsWith('GET ') && r.endsWith('.onnx')).length;
    log(`${plan.model} ${plan.device}: warm load ${(warm.ms / 1000).toFixed(1)} s (${warmFetches} onnx fetch${warmFetches ? ' — not served from the cache!' : ''})`);
    const load: LoadResult = { ...base, bytes: cold.bytes, cold_ms: cold.ms, warm_ms: warm.ms };

    /** Runs one worker call and reports the CPU seconds the browser used meanwhile. */
    const timed: Timed = async <T>(name: string, ...args: unknown[]) => {
      const c0 = sampler.cpu();
      const r = await p.call<T>(name, ...args);
      return { r, cpu: sampler.cpu() - c0 };
    };

    // ---- warm-up: one small decision each way (first runs allocate onnxruntime's arenas)
    await p.call('setupDecisions', 'warmup', 32, 99);
    await p.call('engineDecision', 'warmup', 2);
    await p.call('naivePass', 'warmup', 0);
    await p.call('naivePass', 'warmup', 1);
    await p.call('gpuResetPeak');
    sampler.mark();
    p.heap.mark();

    // ---- decisions, engine against the naive way (bench/lib/decision-rows.ts)
    const { decisions, measuredStates } = await measureDecisions(p, plan, base, timed, notes, log);
    memory.push(await phaseMemory(base, 'decisions', sampler, p));

    // ---- the prefix cache: the same state asked again, a system prompt shared by two conversations
    let prefix: Awaited<ReturnType<typeof measurePrefixCache>> = { decisions: [], chat: null };
    try {
      prefix = await measurePrefixCache(p, plan, { model: plan.model, device: plan.device, dtype: plan.dtype }, measuredStates, cold.status.contextLength ?? 2048, log);
    } catch (e) {
      const note = `${plan.model} ${plan.device} prefix cache: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      notes.push(note);
    }

    // ---- chat and the follow-up turn (bench/lib/chat-rows.ts)
    let chat: ChatResult | null = null;
    try {
      chat = await measureChat(p, plan, base, timed, log);
      memory.push(await phaseMemory(base, 'chat', sampler, p));
    } catch (e) {
      const note = `${plan.model} ${plan.device} chat: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      notes.push(note);
    }
    await p.call('dispose');
    await p.close();
    return { decisions, chat, prefixCache: prefix.decisions, prefixChat: prefix.chat, load, memory, threads: cold.status.threads, isolated: info.crossOriginIsolated, adapter };
  } finally {
    sampler.stop();
    await ctx.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  }
}

async function phaseMemory(base: Pick<MemoryResult, 'device' | 'model' | 'dtype' | 'model_bytes'>, phase: MemoryResult['phase'], sampler: ProcessSampler, p: BenchPage): Promise<MemoryResult> {
  await p.heap.sample();
  const gpu = await p.call<{ live: number; peak: number } | null>('gpuBytes');
  await p.call('gpuResetPeak');
  const heap = p.heap.mark();
  const peaks = sampler.mark();
  return {
    ...base,
    phase,
    renderer_peak_rss_bytes: peaks.rendererRss,
    browser_tree_peak_rss_bytes: peaks.treeRss,
    worker_js_heap_peak_bytes: heap?.heap ?? null,
    worker_array_buffers_peak_bytes: heap?.buffers ?? null,
    gpu_buffer_peak_bytes: base.device === 'webgpu' ? (gpu?.peak ?? null) : null,
  };
}

/**
 * The wllama peer (bench/peers/): first the equal-work check (same tokenization, same greedy tokens
 * on both runtimes), then prefill and decode side by side at 1 thread and at the page's thread count.
 */
async function runPeers(plans: TargetPlan[], formatModels: string[], options: Options, result: BenchResult, started: number): Promise<void> {
  const dtypes = PEER_DTYPES.filter((d) => (options.dtypes as string[]).includes(d));
  const models = [...new Set([...plans.filter((p) => p.device === 'wasm').map((p) => p.model), ...formatModels])].filter((name) => {
    const m = peerModel(name);
    const gguf = join(name === TINYSTORIES ? VENDORED : GENERATED, name, m.gguf);
    if (existsSync(gguf)) return true;
    result.notes.push(`${name}: no GGUF at ${gguf}, so no wllama peer (\`npm run models\` writes it).`);
    return false;
  });
  if (!models.length || !dtypes.length) return;
  const marker = `peers-${process.pid}-${Date.now()}`;
  const browser = await launchChromium(marker);
  try {
    log(`wllama peer: checking equal work on ${models.join(', ')} (${dtypes.join(', ')})`);
    try {
      const agreement = await checkModels(browser, models, { steps: 24, build: true, dtypes });
      for (const a of agreement) {
        log(summarize(a));
        result.peer_agreement.push({
          model: a.model,
          dtype: a.dtype,
          bound: a.bound,
          pass: a.pass,
          greedy_steps: a.greedy.steps,
          identical_greedy_tokens: a.greedy.identical,
          greedy_first_mismatch: a.greedy.first_mismatch,
          max_abs_dlogprob_top: Number(a.greedy.max_abs_dlogprob_top.toExponential(2)),
          tokenization_agree: `${a.tokenization.filter((t) => t.agree).length}/${a.tokenization.length}`,
        });
        if (!a.pass) result.notes.push(`${a.model} ${a.dtype}: wllama and the engine disagree (see peer_agreement): its peer rows compare unequal work.`);
      }
    } catch (e) {
      const note = `wllama equal-work check failed (${(e as Error).message.split('\n')[0]})`;
      log(note);
      result.notes.push(note);
    }
    try {
      // tiny-random-llama (1,024 ids, 128 of them lone bytes ≥ 0x80) soon generates a partial UTF-8
      // piece, and wllama 3.8.1's server then fails writing the text ("Invalid typed array length"):
      // it gets the equal-work check above (which bans those ids on both sides), not the timing.
      const timed = models.filter((m) => m !== 'tiny-random-llama');
      if (timed.length < models.length) result.notes.push('tiny-random-llama: equal-work check only; wllama 3.8.1 fails on the partial UTF-8 pieces its greedy text soon contains, so no peer timing.');
      const peers = await runWllamaPeers(browser, {
        models: timed,
        dtypes,
        ...(options.threads ? { threads: [...new Set([1, options.threads])] } : {}),
        reps: options.peerReps ?? (options.quick ? 1 : 3),
        promptTokens: 400,
        decodeTokens: options.quick ? 16 : 64,
        build: false,
        marker,
        log: (l) => log(l.trim()),
      });
      result.peers.push(...peers.rows);
      result.peer_details.push(...peers.details);
    } catch (e) {
      const note = `wllama peer: not measured (${(e as Error).message.split('\n')[0]})`;
      log(note);
      result.notes.push(note);
    }
  } finally {
    await browser.close();
  }
  writeJson(options.json, finalize(result, started));
}

function evaluateTargets({ decisions, chat, peers, peer_details, prefix_cache: prefix, formats }: BenchResult): TargetResult[] {
  const out: TargetResult[] = [];
  /** A target met when `value` (unmeasured: null) is at least `threshold`. */
  const atLeast = (name: string, value: number | null, threshold: number, detail: string) =>
    out.push({ name, value: value === null ? null : round(value, 3), threshold, met: value === null ? null : value >= threshold, detail: value === null ? 'not measured' : detail });
  // Never slower than the naive way: one question at ≥ 0.97×, several at ≥ 90 % of the ceiling, every S, every model.
  for (const x of decisions.filter((r) => r.device === 'wasm')) {
    const one = x.questions === 1;
    atLeast(
      `decisions ${x.model} Q=${x.questions} S=${x.state_tokens}: ${one ? 'speedup ≥ 0.97× naive' : 'speedup ≥ 90% of its token-count ceiling'}`,
      one ? x.speedup : x.efficiency,
      one ? 0.97 : 0.9,
      `${fmt(x.engine_ms)} vs naive ${fmt(x.naive_ms)}: ${x.speedup.toFixed(2)}× of a ${x.ceiling.toFixed(2)}× ceiling`,
    );
  }
  const pc = prefix.find((x) => x.model === SMOL && x.device === 'wasm' && x.questions === 4 && x.state_tokens === 512);
  atLeast(
    'prefix cache S=512 Q=4: repeat ≥ 5× faster than first',
    pc ? pc.first_ms / pc.repeat_ms : null,
    5,
    pc ? `${fmt(pc.first_ms)} first, ${fmt(pc.repeat_ms)} repeat reusing ${pc.cached_tokens} tokens; fed ${pc.first_tokens} tokens first, ${pc.repeat_tokens} repeated (a ${(pc.first_tokens / pc.repeat_tokens).toFixed(2)}× token ceiling); the same questions from cold ${fmt(pc.cold_repeat_ms)} (${pc.speedup_same_work}×); answers within ${pc.max_prob_diff}` : '',
  );
  const d = decisions.find((x) => x.model === SMOL && x.device === 'wasm' && x.questions === 16 && x.state_tokens === 512);
  atLeast(
    'decisions Q=16 S=512: speedup ≥ 80% of its token-count ceiling',
    d ? d.efficiency : null,
    0.8,
    d
      ? `speedup ${d.speedup.toFixed(2)}× of a ${d.ceiling.toFixed(2)}× ceiling (${(d.efficiency * 100).toFixed(0)}%); in CPU time ${d.speedup_cpu.toFixed(2)}× (${((d.speedup_cpu / d.ceiling) * 100).toFixed(0)}%); fastest samples ${d.speedup_best.toFixed(2)}× (${((d.speedup_best / d.ceiling) * 100).toFixed(0)}%)`
      : '',
  );
  const c = chat.find((x) => x.model === SMOL && x.device === 'wasm');
  atLeast(
    'chat decode at least as fast as the pipeline baseline',
    c ? c.decode_tps / c.baseline_decode_tps : null,
    1,
    c ? `${c.decode_tps.toFixed(2)} vs ${c.baseline_decode_tps.toFixed(2)} tok/s (medians of ${c.reps}; best ${c.best.decode_tps.toFixed(2)} vs ${c.best.baseline_decode_tps.toFixed(2)}; CPU share ${c.cpu_share.engine} vs ${c.cpu_share.baseline})` : '',
  );
  atLeast(
    'follow-up time to first token ≥ 3× faster with KV reuse than cold',
    c ? c.cold_followup_ttft_ms / c.followup_ttft_ms : null,
    3,
    c ? `${fmt(c.followup_ttft_ms)} vs ${fmt(c.cold_followup_ttft_ms)} cold, after ${c.followup_history_tokens} tokens of history` : '',
  );
  // The peer goal: at least wllama's speed, every dtype, at 1 thread and at every core.
  for (const p of peers) {
    for (const [what, engine, peer] of [
      ['prefill', p.engine_prefill_tps, p.prefill_tps],
      ['decode', p.engine_decode_tps, p.decode_tps],
    ] as const) {
      atLeast(
        `${what} at least as fast as wllama (llama.cpp), ${p.model} ${p.dtype ?? 'fp32'}, ${p.threads} thread${p.threads > 1 ? 's' : ''}`,
        engine / peer,
        1,
        `${engine.toFixed(1)} vs ${peer.toFixed(1)} tok/s (${(engine / peer).toFixed(2)}×)`,
      );
    }
  }
  // Memory: serving on wasm within twice the model's bytes, and within wllama's peak on the same weights.
  for (const f of formats ?? []) {
    if (f.device !== 'wasm' || f.serving_peak_rss_bytes === null || !f.model_bytes) continue;
    atLeast(
      `memory ${f.model} ${f.dtype}: serving peak renderer RSS ≤ 2× the model's bytes (value: 2 × bytes ÷ peak)`,
      (2 * f.model_bytes) / f.serving_peak_rss_bytes,
      1,
      `${mib(f.serving_peak_rss_bytes)} serving for ${mib(f.model_bytes)} of model (${(f.serving_peak_rss_bytes / f.model_bytes).toFixed(2)}×)`,
    );
  }
  for (const d of peer_details) {
    const e = d.memory?.engine.serving_peak_rss_bytes;
    const w = d.memory?.wllama.serving_peak_rss_bytes;
    if (!e || !w) continue;
    atLeast(
      `memory ${d.model} ${d.dtype}, ${d.threads} thread${d.threads > 1 ? 's' : ''}: serving peak renderer RSS ≤ wllama's (value: wllama ÷ engine)`,
      w / e,
      1,
      `engine ${mib(e)} (file ${mib(d.memory!.engine.model_bytes)}), wllama ${mib(w)} (file ${mib(d.memory!.wllama.model_bytes)})`,
    );
  }
  return out;
}

function finalize(result: BenchResult, started: number): BenchResult {
  result.targets = evaluateTargets(result);
  result.load_average.end = loadAverage();
  result.duration_s = Math.round((performance.now() - started) / 1000);
  return result;
}

function writeJson(file: string, result: BenchResult): void {
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
}

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const hasTinyStories = existsSync(join(VENDORED, TINYSTORIES, 'onnx/model.onnx'));
  // The generated models the plan needs: written here when missing or stale (a fresh clone has
  // none), with the generator's progress; up to date, they are only checked.
  // Format rows (and the quantized peer): the SmolLM2-shaped model by default; tiny-random-llama
  // only when named (smoke runs).
  const formatModels = (options.models ?? [SMOL]).filter((m) => FORMAT_MODELS.includes(m));
  const toGenerate = [...new Set([...(!options.models || options.models.includes(SMOL) ? [SMOL] : []), ...(options.formats ? formatModels : [])])];
  for (const name of toGenerate) {
    const names = options.formats && options.gqa && formatModels.includes(name) ? [name, `${name}${GQA_SUFFIX}`] : [name];
    log(`checking the generated models ${names.join(', ')}; written now if missing or stale`);
    await generateModels({ only: names, log: (message) => log(`  ${message}`) });
  }
  if (options.logits) {
    log(`checking the generated model ${BIG_VOCABULARY_MODEL} (the logits-bound rows)`);
    await generateModels({ only: [BIG_VOCABULARY_MODEL], log: (message) => log(`  ${message}`) });
  }
  const plans = options.grid ? makePlan({ quick: options.quick, webgpu: options.webgpu, models: options.models, hasTinyStories }) : [];
  for (const p of plans) {
    // Overrides for short investigative runs.
    if (options.states) p.states = options.states.map((tokens) => ({ tokens, reps: options.reps ?? p.states[0]!.reps }));
    if (options.reps) {
      p.states = p.states.map((st) => ({ ...st, reps: options.reps! }));
      p.chat.reps = options.reps;
      p.followup.reps = options.reps;
    }
  }
  const loadStart = loadAverage();
  log(`building the bench page; targets: ${plans.map((p) => `${p.model}/${p.device}/${p.dtype}`).join(', ')}`);
  const dist = await buildPage();
  log('page built');
  const site = await startStatic(dist);
  const mirror = await startModelHost(MODEL_ROOTS);
  const result: BenchResult = {
    schema: 'jev-bench/1',
    machine: machineDescription(),
    browser: browserVersion(chromiumPath()),
    commit: commitId(REPO),
    date: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    threads: null,
    cross_origin_isolated: false,
    adapter: null,
    reps: Object.fromEntries(
      plans.map((p) => [
        `${p.model}/${p.device}`,
        { decisions: Object.fromEntries(p.states.map((s) => [`S=${s.tokens}`, s.reps])), chat: p.chat.reps, followup: p.followup.reps, load: 1 },
      ]),
    ),
    load_average: { start: loadStart, end: [] },
    duration_s: 0,
    decisions: [],
    chat: [],
    peers: [],
    formats: [],
    peer_details: [],
    peer_agreement: [],
    prefix_cache: [],
    prefix_cache_chat: [],
    load: [],
    memory: [],
    targets: [],
    notes: [],
  };
  try {
    for (const plan of plans) {
      let out: TargetOutput;
      try {
        out = await runTarget(plan, site.url, mirror, options, result.notes);
      } catch (e) {
        const note = `${plan.model} ${plan.device}: failed (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
        continue;
      }
      result.decisions.push(...out.decisions);
      if (out.chat) result.chat.push(out.chat);
      result.prefix_cache.push(...out.prefixCache);
      if (out.prefixChat) result.prefix_cache_chat.push(out.prefixChat);
      result.load.push(out.load);
      result.memory.push(...out.memory);
      if (plan.device === 'wasm') {
        result.threads = out.threads;
        result.cross_origin_isolated = out.isolated;
      }
      if (out.adapter) result.adapter = out.adapter;
      // A checkpoint after each target: a later failure loses nothing measured so far.
      writeJson(options.json, finalize(result, started));
    }
    if (options.logits) {
      try {
        result.memory.push(...(await measureLogitsBound(site.url, mirror, MODEL_ROOTS, options.threads, log)));
      } catch (e) {
        const note = `logits-bound rows: not measured (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
      }
      writeJson(options.json, finalize(result, started));
    }
    if (options.formats && formatModels.length) {
      const fplan = formatPlan({ quick: options.quick, models: formatModels, gqa: options.gqa, dtypes: options.dtypes, reps: options.reps, threads: options.threads });
      log(`format rows: ${formatModels.join(', ')}${options.gqa ? ' and their GQA exports' : ''}, ${fplan.dtypes.join(', ')} on ${fplan.device}`);
      try {
        result.formats.push(...(await runFormats(fplan, site.url, mirror, log)));
      } catch (e) {
        const note = `format rows: not measured (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
      }
      writeJson(options.json, finalize(result, started));
    }
  } finally {
    await site.close();
    await mirror.close();
  }
  if (options.peers) await runPeers(plans, formatModels, options, result, started);
  if (!options.webgpu) result.notes.push('WebGPU not run (pass --webgpu): on this machine it is SwiftShader on the CPU, under 0.1 tok/s for the 135M model.');
  if (!hasTinyStories) result.notes.push(`${TINYSTORIES} not found under vendor/models: skipped.`);
  writeJson(options.json, finalize(result, started));
  log(`wrote ${options.json}`);
  if (options.md) {
    // The chart sits beside the document, as SVG text written here (no network, no dependency).
    const chart = options.md.replace(/\.md$/, '') + '.svg';
    writeFileSync(chart, renderChart(result.decisions, result.chat));
    const block = renderResults(result, `npm run bench -- ${process.argv.slice(2).join(' ')}`, basename(chart));
    const existing = existsSync(options.md) ? readFileSync(options.md, 'utf8') : null;
    writeFileSync(options.md, updateDocument(existing, block));
    log(`wrote ${options.md} and ${chart}`);
  }
  for (const t of result.targets) log(`${t.met === null ? 'n/a ' : t.met ? 'MET ' : 'MISS'} ${t.name}: ${t.detail}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
