/**
 * Where the engine's time per generated token goes, on the wasm device (onnxruntime-web in an engine
 * worker, `threads` threads), and what onnxruntime-web's options and builds change:
 *
 *   npx tsx bench/peers/profile-engine.ts [--model smollm2-135m-random] [--threads N] [--prompt 400]
 *                                         [--steps 32] [--reps 3] [--only NAME]... [--json FILE]
 *                                         [--max-load L [--max-wait S]] [--dtype fp32|q4|q8] [--candidate TEXT]
 *
 * `--dtype q4` / `q8` profiles the baseline worker on that ONNX file (the breakdown: `--only breakdown`;
 * the graph variants below are fp32 graphs).
 *
 *  1. breakdown  an instrumented copy of the decode loop (engine.worker.ts `profile`) after a
 *                ~400-token prompt: JS input tensors, transformers.js around session.run,
 *                session.run split by onnxruntime-web's own trace points into copying inputs into
 *                wasm memory / the graph / copying outputs out, the KvCache bookkeeping, the
 *                log-softmax over the vocabulary, the greedy pick; plus the sampler at temperature 0.7,
 *                top_p 0.9.
 *  2. kvonly     the same loop over a graph that only concatenates the KV cache (variants.ts): the
 *                whole per-step cost around the model.
 *  3. options    prefill and decode tok/s for each candidate against the baseline worker, measured
 *                alternately in the same page (A B B A …; medians and best runs, and their ratios):
 *                onnxruntime-web builds (plain, jspi, asyncify; the baseline is the product's choice, jspi where the browser has JSPI), session
 *                options (graphOptimizationLevel, executionMode, memory arena/pattern, thread
 *                spinning), the last-position-logits graph, and whether preferredOutputLocation /
 *                enableGraphCapture are accepted on wasm at all.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { launchChromium, openPeersPage } from './browser.ts';
import { peerModel } from './models.ts';
import type { EngineLoadOptions } from './page/engine.worker.ts';
import { load1, waitForQuiet } from './quiet.ts';
import { median as medianOf } from '../lib/schema.ts';
import { MODEL_ROOTS, REPO } from './serve.ts';
import { VARIANTS_DIR, writeVariant } from './variants.ts';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: 'smollm2-135m-random' },
    dtype: { type: 'string', default: 'fp32' },
    threads: { type: 'string' },
    prompt: { type: 'string', default: '400' },
    steps: { type: 'string', default: '32' },
    reps: { type: 'string', default: '3' },
    'max-load': { type: 'string' },
    'max-wait': { type: 'string', default: '120' },
    only: { type: 'string', multiple: true },
    candidate: { type: 'string' },
    json: { type: 'string', default: resolve(REPO, 'bench-results/engine-profile.json') },
    'no-build': { type: 'boolean', default: false },
    verbose: { type: 'boolean', default: false },
  },
});

/** The median of the finite values (a trace point onnxruntime did not report is NaN). */
const median = (xs: number[]) => medianOf(xs.filter((x) => Number.isFinite(x)));
const r2 = (x: number) => Math.round(x * 100) / 100;
const log = (l: string) => console.log(l);

const model = peerModel(values.model);
const steps = Number(values.steps);
const reps = Number(values.reps);
const want = (name: string) => !values.only || values.only.includes(name);
const maxLoad = values['max-load'] ? Number(values['max-load']) : undefined;
const maxWait = Number(values['max-wait']) * 1000;

const spec = (await import('../../scripts/models/specs.ts')).findSpec(model.name);
const variants = { lastlogits: writeVariant('lastlogits', spec), kvonly: writeVariant('kvonly', spec) };
log(`variants in ${VARIANTS_DIR}: ${Object.values(variants).join(', ')}`);

const browser = await launchChromium();
const s = await openPeersPage(browser, { build: !values['no-build'], roots: [...MODEL_ROOTS, VARIANTS_DIR], verbose: values.verbose });
const out: Record<string, unknown> = { model: model.name, dtype: values.dtype, loadavg_start: load1() };
try {
  const info = await s.call('info');
  const threads = Number(values.threads ?? info.hardwareConcurrency);
  out['threads'] = threads;
  out['environment'] = { ...info, browser: browser.version() };
  let workers = 0;
  const start = async (opts: Partial<EngineLoadOptions>) => {
    const key = `w${++workers}`;
    await s.call('engineStart', key);
    const call = <T>(method: string, ...args: unknown[]) => s.call('engineCall', key, method as never, ...args) as Promise<T>;
    const stop = () => s.call('engineStop', key);
    try {
      const loaded = await call<{ ms: number; threads: number }>('load', { model: model.name, threads, ...opts });
      return { key, call, loaded, stop };
    } catch (e) {
      await stop();
      throw e;
    }
  };

  // the prompt, tokenized by the baseline worker
  const base = await start({ dtype: values.dtype as EngineLoadOptions['dtype'] });
  const prompt = await base.call<{ text: string; tokens: number }>('promptText', model.benchText, Number(values.prompt), model.addSpecialTokens);
  const ids = await base.call<number[]>('encode', prompt.text, model.addSpecialTokens);
  out['prompt_tokens'] = ids.length;
  log(`${model.name}, ${threads} threads, ${ids.length}-token prompt; baseline loaded in ${(base.loaded.ms / 1000).toFixed(1)} s`);
  await base.call('bench', ids.slice(0, 32), 4); // warm-up

  type Bench = { prefill_tps: number; decode_tps: number; step_ms_median: number };
  type Caller = { call: <T>(m: string, ...a: unknown[]) => Promise<T> };
  const once = async (w: Caller) => {
    const load = await waitForQuiet(maxLoad, maxWait);
    return { ...(await w.call<Bench>('bench', ids, steps + 1)), load };
  };
  const summary = (xs: (Bench & { load: number })[]) => ({
    prefill_tps: r2(median(xs.map((x) => x.prefill_tps))),
    decode_tps: r2(median(xs.map((x) => x.decode_tps))),
    step_ms: r2(median(xs.map((x) => x.step_ms_median))),
    best_prefill_tps: r2(Math.max(...xs.map((x) => x.prefill_tps))),
    best_decode_tps: r2(Math.max(...xs.map((x) => x.decode_tps))),
    loads: xs.map((x) => x.load),
  });
  const bench = async (w: Caller) => {
    const xs: (Bench & { load: number })[] = [];
    for (let r = 0; r < reps; r++) xs.push(await once(w));
    return summary(xs);
  };
  /** Baseline and candidate alternately (A B B A A B …), so both see the same conditions. */
  const paired = async (a: Caller, b: Caller) => {
    const xa: (Bench & { load: number })[] = [];
    const xb: (Bench & { load: number })[] = [];
    for (let r = 0; r < reps; r++) {
      for (const side of r % 2 === 0 ? ['a', 'b'] : ['b', 'a']) (side === 'a' ? xa : xb).push(await once(side === 'a' ? a : b));
    }
    const A = summary(xa);
    const B = summary(xb);
    return {
      ...B,
      baseline: A,
      prefill_ratio: r2(B.prefill_tps / A.prefill_tps),
      decode_ratio: r2(B.decode_tps / A.decode_tps),
      best_prefill_ratio: r2(B.best_prefill_tps / A.best_prefill_tps),
      best_decode_ratio: r2(B.best_decode_tps / A.best_decode_tps),
    };
  };

  // ---- 1. breakdown
  type Row = Record<string, number>;
  const summarize = (rows: Row[]) => Object.fromEntries(Object.keys(rows[0] ?? {}).map((k) => [k, r2(median(rows.map((r) => r[k]!)))]));
  if (want('breakdown')) {
    await waitForQuiet(maxLoad, maxWait);
    const plain = await base.call<{ rows: Row[]; sampler_t07_ms: number; kvBytesPerToken: number; vocab: number }>('profile', ids, steps, false);
    await waitForQuiet(maxLoad, maxWait);
    const traced = await base.call<{ rows: Row[] }>('profile', ids, steps, true);
    const js = await base.call<Record<string, number>>('jsCosts', plain.vocab);
    out['breakdown'] = {
      untraced: summarize(plain.rows),
      traced: summarize(traced.rows),
      sampler_t07_ms: r2(plain.sampler_t07_ms),
      js_costs_synthetic: js,
      kv_bytes_per_token: plain.kvBytesPerToken,
      kv_mib_in_plus_out_per_step: r2((2 * plain.kvBytesPerToken * (ids.length + steps / 2)) / 2 ** 20),
      baseline: await bench(base),
      load: load1(),
    };
    log(`breakdown: ${JSON.stringify(out['breakdown'], null, 1)}`);
  }

  // ---- 2. kvonly
  if (want('kvonly')) {
    const kv = await start({ model: variants.kvonly });
    await waitForQuiet(maxLoad, maxWait);
    const plain = await kv.call<{ rows: Row[] }>('profile', ids, steps, false);
    await waitForQuiet(maxLoad, maxWait);
    const traced = await kv.call<{ rows: Row[] }>('profile', ids, steps, true);
    const v = { untraced: summarize(plain.rows), traced: summarize(traced.rows), bench: await bench(kv) };
    await kv.stop();
    out['kvonly'] = v;
    log(`kvonly: ${JSON.stringify(v)}`);
  }

  // ---- 3. options, each paired with a baseline run just before it
  const candidates: { name: string; opts: Partial<EngineLoadOptions> }[] = [
    { name: 'KV copied out of wasm memory and back in each pass (onnxruntime-web unpatched: build/ort-patch.mjs off)', opts: { residentOutputs: false } },
    { name: "dtype q8 (the engine's first choice on wasm; not the peer's weights)", opts: { dtype: 'q8' } },
    { name: 'ort build: plain (non-asyncify) wasm', opts: { ortBuild: 'plain' } },
    { name: 'ort build: jspi wasm', opts: { ortBuild: 'jspi' } },
    { name: 'ort build: asyncify wasm (where JSPI is missing)', opts: { ortBuild: 'asyncify' } },
    { name: 'graph: logits of the last position only', opts: { model: variants.lastlogits } },
    { name: 'graphOptimizationLevel: disabled', opts: { sessionOptions: { graphOptimizationLevel: 'disabled' } } },
    { name: 'graphOptimizationLevel: basic', opts: { sessionOptions: { graphOptimizationLevel: 'basic' } } },
    { name: 'graphOptimizationLevel: extended', opts: { sessionOptions: { graphOptimizationLevel: 'extended' } } },
    { name: 'executionMode: parallel', opts: { sessionOptions: { executionMode: 'parallel' } } },
    { name: 'enableCpuMemArena: false', opts: { sessionOptions: { enableCpuMemArena: false } } },
    { name: 'enableMemPattern: false', opts: { sessionOptions: { enableMemPattern: false } } },
    { name: 'intra_op.allow_spinning: 0', opts: { sessionOptions: { extra: { session: { intra_op: { allow_spinning: '0' } } } } } },
    { name: "preferredOutputLocation: 'cpu-pinned'", opts: { sessionOptions: { preferredOutputLocation: 'cpu-pinned' } } },
    { name: "preferredOutputLocation: 'gpu-buffer' (wasm)", opts: { sessionOptions: { preferredOutputLocation: 'gpu-buffer' } } },
    { name: 'enableGraphCapture: true (wasm)', opts: { sessionOptions: { enableGraphCapture: true } } },
  ];
  const options: Record<string, unknown>[] = [];
  if (want('options')) {
    for (const c of candidates.filter((x) => !values.candidate || x.name.includes(values.candidate!))) {
      let result: Record<string, unknown>;
      try {
        const w = await start(c.opts);
        try {
          await w.call('bench', ids.slice(0, 32), 4);
          result = await paired(base, w);
        } finally {
          await w.stop();
        }
      } catch (e) {
        result = { error: String((e as Error).message ?? e).split('\n')[0]!.slice(0, 300) };
      }
      options.push({ name: c.name, ...result });
      log(`${c.name}: ${JSON.stringify(result)}`);
    }
    out['options'] = options;
  }
  await base.stop();
} finally {
  out['loadavg_end'] = load1();
  mkdirSync(dirname(values.json), { recursive: true });
  writeFileSync(values.json, `${JSON.stringify(out, null, 2)}\n`);
  log(`wrote ${values.json}`);
  await s.close();
  await browser.close();
}
