/**
 * The wllama peer for the benchmark (CONTRACT §1 `peers`): wllama 3.8.1 (llama.cpp in wasm) on the
 * GGUF and this engine on the ONNX file of the same weights, each in a page of its own (its own
 * renderer process) of the same Chromium, measured alternately (wllama, engine, engine, wllama, …)
 * so that drift and other load hit both alike. Neither runtime's model, heap or idle threads live in
 * the other's process, and each side's memory is its renderer's: its peak resident set while loading
 * (from a fresh renderer) and while serving (the runs, warm-ups included), as Linux counts it (VmHWM).
 *
 * Equal work (checked by check-wllama.ts): the same prompt text (≈ 400 tokens, the same ids on both
 * sides: prompt_tokens is compared), 64 tokens generated greedily without stopping at end-of-text,
 * an f32 KV cache and flash attention off in llama.cpp, cache_prompt off so nothing is reused
 * between repetitions, `threads` wasm threads on both sides (a fresh engine worker per thread count:
 * onnxruntime-web fixes its thread pool when it initialises).
 *
 *   prefill_tps  prompt tokens ÷ time to read the prompt and pick the first token
 *                wllama: llama.cpp's timings.prompt_n / prompt_ms (prompt decode + first sampling)
 *                engine: LanguageModel.forward(prompt) + log-softmax + pick, as chat.ts does
 *   decode_tps   decode passes ÷ their time, 63 passes for 64 tokens (the first token comes from the
 *                prefill): wllama (predicted_n − 1) / predicted_ms — llama.cpp's own predicted_per_second
 *                counts 64 tokens over those 63 passes —; engine: 63 forward([token]) + log-softmax
 *                + pick.
 *
 * `dtype` (fp32, q4, q8): the engine's ONNX file of that dtype against the GGUF of the same weights
 * (F32, Q4_0, Q8_0: scripts/models/gguf-quant.ts), both at `threads`.
 */
import type { Browser } from 'playwright-core';
import { fileBytes, modelBytes } from '../lib/model-bytes.ts';
import { mib } from '../lib/measure.ts';
import { median, type PeerDetail, type PeerRow } from '../lib/schema.ts';
import type { SessionRewriteReport } from '../../src/engine/load/session-rewrites.ts';
import { grownRenderer, peakRss, rendererRss, resetPeakRss } from '../../scripts/machine/procs.ts';
import { type PeersSession, openPeersPage } from './browser.ts';
import { type PeerDtype, type PeerModel, ggufFile, ggufUrl, peerModel } from './models.ts';
import { MODEL_ROOTS } from './serve.ts';
import { load1, sleep, waitForQuiet } from './quiet.ts';

export interface PeerOptions {
  /** Engine dtype and GGUF; default fp32. */
  dtype?: PeerDtype;
  /** The engine's embedding and lm_head at 8 bits (LoadOptions.quantizeHead); default: the product's choice for the dtype. */
  quantizeHead?: boolean;
  /** Prompt size in tokens (the longest word prefix of the prose within it). Default 400. */
  promptTokens?: number;
  /** Tokens to generate. Default 64. */
  decodeTokens?: number;
  /** Measured repetitions per side (after one warm-up each). Default 3. */
  reps?: number;
  /** Pause between measurements, ms (lets the other runtime's threads go idle). Default 300. */
  pauseMs?: number;
  /**
   * Before each measurement, wait (up to `maxWaitMs`) until the machine's 1-minute load average is
   * below this: other processes on a 2-core machine swamp wasm threads that spin-wait. Default off.
   */
  maxLoad?: number;
  maxWaitMs?: number;
  /** The `--jev-bench-marker` the browser was launched with (launchChromium): each side's memory is read only with it. */
  marker?: string;
  /** Build the pages first (default: when missing). */
  build?: boolean;
  verbose?: boolean;
  log?: (line: string) => void;
}

const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

interface Timings {
  cache_n: number;
  prompt_n: number;
  prompt_ms: number;
  predicted_n: number;
  predicted_ms: number;
}
interface Completion {
  wall_ms: number;
  res: { usage: { prompt_tokens: number; completion_tokens: number }; timings?: Timings };
}
interface EngineBench {
  prompt_tokens: number;
  prefill_tps: number;
  decode_tps: number;
  step_ms_median: number;
  decode_steps: number;
  steps?: { outside_ms_median: number; run_ms_median: number; step_ms_max: number };
}

/**
 * Measures one (model, threads) pair, `threads` on both sides, each side in a fresh peers page of
 * its own. Returns the contract row and the detail behind it.
 */
export async function measurePeer(browser: Browser, model: PeerModel | string, threads: number, opts: PeerOptions = {}): Promise<{ row: PeerRow; detail: PeerDetail }> {
  const m = typeof model === 'string' ? peerModel(model) : model;
  const promptTokens = opts.promptTokens ?? 400;
  const decodeTokens = opts.decodeTokens ?? 64;
  const reps = opts.reps ?? 3;
  const pause = opts.pauseMs ?? 300;
  const log = opts.log ?? (() => {});
  const dtype = opts.dtype ?? 'fp32';
  const key = `peer-${m.name}-${dtype}-${threads}`;
  const load0 = load1();
  const pageOptions = { ...(opts.build !== undefined ? { build: opts.build } : {}), ...(opts.verbose ? { verbose: true } : {}) };
  const pages: PeersSession[] = [];
  const open = async () => {
    const page = await openPeersPage(browser, pageOptions);
    pages.push(page);
    return page;
  };

  try {
    const es = await open();
    const ws = await open();
    const engine = <T>(method: string, ...args: unknown[]) => es.call('engineCall', key, method as never, ...args) as Promise<T>;
    const marker = opts.marker;
    const before = marker ? rendererRss(marker) : null;
    await es.call('engineStart', key);
    const eLoad = await engine<{ ms: number; threads: number; ortBuild?: string | null; rewrites?: Pick<SessionRewriteReport, 'int8Head' | 'tiedHead'> }>('load', { model: m.name, threads, dtype, ...(opts.quantizeHead !== undefined ? { quantizeHead: opts.quantizeHead } : {}) });
    if (eLoad.threads !== threads) throw new Error(`engine runs ${eLoad.threads} threads, asked for ${threads}`);
    const enginePid = marker && before ? grownRenderer(marker, before) : null;
    const between = marker ? rendererRss(marker) : null;
    const wLoad = await ws.call('wllamaLoad', { url: ggufUrl(m, dtype), threads, nCtx: m.nCtx, flashAttn: false, cacheType: 'f32' });
    if (wLoad.threads !== threads) throw new Error(`wllama runs ${wLoad.threads} threads, asked for ${threads}`);
    const wllamaPid = marker && between && enginePid !== null ? grownRenderer(marker, between, [enginePid]) : null;
    // each renderer's peak so far is its load's; restart both to read the serving peak after the runs
    const loadPeak = { engine: enginePid === null ? null : peakRss(enginePid), wllama: wllamaPid === null ? null : peakRss(wllamaPid) };
    const restarted = enginePid !== null && wllamaPid !== null && resetPeakRss(enginePid) && resetPeakRss(wllamaPid);
    log(`  ${m.name} ${dtype} ×${threads}: engine loaded in ${(eLoad.ms / 1000).toFixed(1)} s, wllama in ${(wLoad.load_ms / 1000).toFixed(1)} s (multithread ${wLoad.multithread})`);

    const prompt = await engine<{ text: string; tokens: number }>('promptText', m.benchText, promptTokens, m.addSpecialTokens);
    const ids = await engine<number[]>('encode', prompt.text, m.addSpecialTokens);

    const runWllama = async (maxTokens: number, text = prompt.text) => {
      const r = (await ws.call('wllamaComplete', {
        prompt: text,
        max_tokens: maxTokens,
        temperature: 0,
        ignore_eos: true,
        cache_prompt: false,
      } as never)) as Completion;
      const t = r.res.timings;
      if (!t) throw new Error('wllama returned no timings');
      if (r.res.usage.completion_tokens !== maxTokens) throw new Error(`wllama generated ${r.res.usage.completion_tokens} tokens, not ${maxTokens}`);
      return { prefill: (t.prompt_n * 1000) / t.prompt_ms, decode: ((t.predicted_n - 1) * 1000) / t.predicted_ms, wall: r.wall_ms, cache: t.cache_n, promptTokens: r.res.usage.prompt_tokens };
    };
    const runEngine = (tokens: number, promptIds = ids) => engine<EngineBench>('bench', promptIds, tokens);

    // warm-up: first passes allocate and initialise kernels on both sides
    await runWllama(4, prompt.text.split(' ').slice(0, 20).join(' '));
    await runEngine(4, ids.slice(0, 32));

    const w = { prefill: [] as number[], decode: [] as number[], wall: [] as number[], cache: [] as number[] };
    const e = { prefill: [] as number[], decode: [] as number[], step: [] as number[], outside: [] as number[] };
    let wPromptTokens = 0;
    const loads: number[] = [];
    for (let r = 0; r < reps; r++) {
      const order = r % 2 === 0 ? ['wllama', 'engine'] : ['engine', 'wllama'];
      for (const side of order) {
        await sleep(pause);
        loads.push(await waitForQuiet(opts.maxLoad, opts.maxWaitMs ?? 120_000));
        if (side === 'wllama') {
          const x = await runWllama(decodeTokens);
          wPromptTokens = x.promptTokens;
          w.prefill.push(x.prefill);
          w.decode.push(x.decode);
          w.wall.push(x.wall);
          w.cache.push(x.cache);
          log(`    rep ${r + 1} wllama: prefill ${x.prefill.toFixed(1)} tok/s, decode ${x.decode.toFixed(2)} tok/s`);
        } else {
          const x = await runEngine(decodeTokens);
          e.prefill.push(x.prefill_tps);
          e.decode.push(x.decode_tps);
          e.step.push(x.step_ms_median);
          if (x.steps) e.outside.push(x.steps.outside_ms_median);
          log(
            `    rep ${r + 1} engine (${eLoad.ortBuild ?? '?'}): prefill ${x.prefill_tps.toFixed(1)} tok/s, decode ${x.decode_tps.toFixed(2)} tok/s` +
              (x.steps ? ` (step median ${x.step_ms_median.toFixed(2)} ms, longest ${x.steps.step_ms_max} ms; outside the run ${x.steps.outside_ms_median} ms)` : ''),
          );
        }
      }
    }
    if (wPromptTokens !== ids.length) throw new Error(`prompt tokenized differently: engine ${ids.length}, wllama ${wPromptTokens}`);
    const servingPeak = (pid: number | null) => (restarted && pid !== null ? peakRss(pid) : null);
    const memory: PeerDetail['memory'] =
      enginePid === null || wllamaPid === null
        ? null
        : {
            engine: { model_bytes: modelBytes(MODEL_ROOTS, m.name, dtype), load_peak_rss_bytes: loadPeak.engine, serving_peak_rss_bytes: servingPeak(enginePid) },
            wllama: { model_bytes: fileBytes(MODEL_ROOTS, m.name, ggufFile(m, dtype)), load_peak_rss_bytes: loadPeak.wllama, serving_peak_rss_bytes: servingPeak(wllamaPid) },
          };
    if (memory) log(`    peak RSS: engine load ${mib(memory.engine.load_peak_rss_bytes)}, serving ${mib(memory.engine.serving_peak_rss_bytes)}; wllama load ${mib(memory.wllama.load_peak_rss_bytes)}, serving ${mib(memory.wllama.serving_peak_rss_bytes)}`);
    const row: PeerRow = {
      peer: 'wllama',
      model: m.name,
      dtype,
      device: 'wasm',
      threads,
      prefill_tps: round(median(w.prefill)),
      decode_tps: round(median(w.decode)),
      engine_prefill_tps: round(median(e.prefill)),
      engine_decode_tps: round(median(e.decode)),
    };
    const detail: PeerDetail = {
      model: m.name,
      dtype,
      threads,
      prompt_tokens: { engine: ids.length, wllama: wPromptTokens },
      decode_tokens: decodeTokens,
      reps,
      wllama: {
        multithread: wLoad.multithread,
        threads: wLoad.threads,
        load_ms: round(wLoad.load_ms),
        prefill_tps: w.prefill.map((x) => round(x)),
        decode_tps: w.decode.map((x) => round(x)),
        wall_ms: w.wall.map((x) => round(x)),
        cache_n: w.cache,
      },
      engine: {
        threads: eLoad.threads,
        load_ms: round(eLoad.ms),
        prefill_tps: e.prefill.map((x) => round(x)),
        decode_tps: e.decode.map((x) => round(x)),
        step_ms_median: e.step.map((x) => round(x)),
        ...(e.outside.length ? { outside_ms_median: e.outside.map((x) => round(x, 3)) } : {}),
        ort_build: eLoad.ortBuild ?? null,
        head: eLoad.rewrites ? (eLoad.rewrites.int8Head.engineKernel ? 'int8, engine kernel' : eLoad.rewrites.int8Head.lmHead ? 'int8' : eLoad.rewrites.tiedHead > 0 ? 'float, held once' : 'float') : null,
      },
      memory,
      loadavg: [load0, load1()],
      loadavg_per_run: loads,
    };
    return { row, detail };
  } finally {
    for (const page of pages) await page.close().catch(() => {});
  }
}

export interface RunPeersOptions extends PeerOptions {
  models?: readonly string[];
  /** Dtypes, each where the model has its GGUF (PeerModel.dtypes); default ['fp32']. */
  dtypes?: readonly PeerDtype[];
  /** Thread counts; default [1, navigator.hardwareConcurrency of the page]. */
  threads?: readonly number[];
}

/**
 * Measures every model at every thread count in `browser` (bench/run.ts launches it with a
 * `marker`, so that each side's memory is read). This is what bench/run.ts calls for CONTRACT §1 `peers`.
 */
export async function runWllamaPeers(browser: Browser, opts: RunPeersOptions = {}): Promise<{ rows: PeerRow[]; details: PeerDetail[]; environment: Record<string, unknown> }> {
  // the page is built once, here, if asked; each measurement then opens fresh pages of it
  const probe = await openPeersPage(browser, { ...(opts.build !== undefined ? { build: opts.build } : {}) });
  const info = await probe.call('info').finally(() => probe.close());
  const threads = opts.threads ?? [...new Set([1, info.hardwareConcurrency])];
  const models = opts.models ?? ['TinyStories-656K', 'smollm2-135m-random'];
  const rows: PeerRow[] = [];
  const details: PeerDetail[] = [];
  for (const model of models) {
    const m = peerModel(model);
    for (const dtype of opts.dtypes ?? ['fp32']) {
      if (!m.dtypes.includes(dtype)) continue;
      for (const t of threads) {
        const { row, detail } = await measurePeer(browser, m, t, { ...opts, dtype, build: false });
        opts.log?.(`  ${JSON.stringify(row)}`);
        rows.push(row);
        details.push(detail);
      }
    }
  }
  return { rows, details, environment: { ...info, browser: browser.version() } };
}
