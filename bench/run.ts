/**
 * `npm run bench -- --json FILE [--quick] [--webgpu] [--models a,b] [--threads N] [--md FILE | --no-md]`
 *                 [--dtypes fp32,fp16,q4,q4f16,q8] [--no-grid] [--no-formats] [--no-gqa] [--no-peers] [--peer-reps N] [--no-logits]
 * (and, for short investigative runs, `--states 64,512` and `--reps N`; `--only serve`: the server in
 * front of a serving engine alone, bench/lib/serve-rows.ts; `--only structured`: chat under a JSON
 * schema against chat without one alone, bench/lib/structured-rows.ts; `--no-structured` skips those;
 * `--only tabs`: renderers' memory with 1, 2 and 4 tabs sharing one engine against independent
 * engines alone, bench/lib/tabs-rows.ts, on the first of `--models` (default the 135M model); `--no-tabs` skips them;
 * `--only ort-builds`: onnxruntime-web's JSPI build against its asyncify build, decode and prefill of
 * TinyStories-656K and the 135M model at fp32 and q8, 1 and 2 threads, side by side: bench/lib/ort-build-rows.ts;
 * `--only sampler`: the time to choose a token from a row of logits, per vocabulary size, greedy,
 * sampled and sampled with logprobs, with no mask and under a wide and a narrow grammar mask, in Node: bench/lib/sampler-rows.ts;
 * `--only decisions-openai`: OpenAI's Decisions shape against the Jev shape, in Node: bench/lib/decisions-openai-rows.ts;
 * `--only extraction`: fields sharing the state against one request per field, and the copy mask, in Node: bench/lib/extraction-rows.ts;
 * then the same rows in the page's engine, in Chromium: bench/lib/extraction-page-rows.ts, unless `--no-page`)
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
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { startModelHost } from '../e2e/support/model-host.ts';
import { startStatic } from '../e2e/support/static-server.ts';
import { generateModels } from '../scripts/models/generate-models.ts';
import { MODEL_ROOTS, REPO, VENDORED } from '../scripts/models/roots.ts';
import { GQA_SUFFIX, formatPlan, runFormats } from './lib/formats.ts';
import { BIG_VOCABULARY_MODEL, measureLogitsBound } from './lib/logits-rows.ts';
import { browserVersion, commitId, machineDescription } from '../scripts/machine/machine.ts';
import { log } from './lib/measure.ts';
import { parseBenchArgs } from './lib/options.ts';
import { runPeers } from './lib/peer-rows.ts';
import { runSamplerOnly } from './lib/sampler-rows.ts';
import { runDecisionsOpenAIOnly } from './lib/decisions-openai-rows.ts';
import { runExtractionOnly } from './lib/extraction-rows.ts';
import { measureExtractionPage } from './lib/extraction-page-rows.ts';
import { runServeOnly } from './lib/serve-rows.ts';
import { measureStructured, structuredPlan } from './lib/structured-rows.ts';
import { measureStructuredCompile } from './lib/structured-compile-rows.ts';
import { measureTabs } from './lib/tabs-rows.ts';
import { measureLoadVisits } from './lib/load-visit-rows.ts';
import { SMOL, TINYSTORIES, makePlan } from './lib/plan.ts';
import { measureOrtBuilds, ortBuildPlan } from './lib/ort-build-rows.ts';
import { modelBytes } from './lib/model-bytes.ts';
import { chromiumOfUserAgent } from './lib/schema.ts';
import { cpus } from 'node:os';
import { loadAverage } from '../scripts/machine/procs.ts';
import { renderChart, renderResults, updateDocument } from './lib/report.ts';
import { finalize, writeJson } from './lib/result-file.ts';
import type { BenchResult } from './lib/schema.ts';
import { buildPage } from './lib/serve.ts';
import { type TargetOutput, runTarget } from './lib/target-run.ts';
import { chromiumPath } from './peers/browser.ts';

/** The generated Llama models with every format (and quantized GGUFs). */
const FORMAT_MODELS = [SMOL, 'tiny-random-llama'];

async function main(): Promise<void> {
  const options = parseBenchArgs(process.argv.slice(2));
  if (options.only === 'serve') {
    // The server in front of a serving engine alone (docs/scale-out.md): Node, no browser.
    await generateModels({ only: ['tiny-random-llama', SMOL], log: (message) => log(`  ${message}`) });
    await runServeOnly(options.json, log, REPO, options.reps ?? undefined);
    return;
  }
  if (options.only === 'decisions-openai') {
    // OpenAI's Decisions shape against the Jev shape (docs/decisions.md): Node, no browser.
    await generateModels({ only: ['tiny-random-llama'], log: (message) => log(`  ${message}`) });
    await runDecisionsOpenAIOnly(options.json, log, REPO, options.reps ?? undefined);
    return;
  }
  if (options.only === 'extraction') {
    // Extraction's shared state against one request per field, and the copy mask (docs/extraction.md): in Node,
    // then the same rows in the page's engine, in its own Chromium (unless `--no-page`).
    await generateModels({ only: [SMOL, 'tiny-random-qwen2', 'tiny-random-gemma3'], log: (message) => log(`  ${message}`) });
    const page = options.page
      ? async (reps: number) => {
          const site = await startStatic(await buildPage());
          const mirror = await startModelHost(MODEL_ROOTS);
          try {
            return await measureExtractionPage(site.url, mirror, options.threads, reps, log);
          } finally {
            await site.close();
            await mirror.close();
          }
        }
      : null;
    await runExtractionOnly(options.json, log, REPO, options.reps ?? undefined, page);
    return;
  }
  if (options.only === 'sampler') {
    // The token choice outside the forward pass alone: Node, no model, no browser.
    runSamplerOnly(options.json, log, REPO, options.reps ?? undefined);
    return;
  }
  if (options.only === 'structured') {
    // Chat under a JSON schema alone: the SmolLM2-shaped model, its own Chromium; JSON only, docs untouched.
    options.grid = options.formats = options.peers = options.logits = options.tabs = false;
    options.models = [SMOL];
    options.md = null;
  }
  if (options.only === 'ort-builds') {
    // The two onnxruntime-web builds alone: JSON only, docs untouched.
    options.grid = options.formats = options.peers = options.logits = options.structured = options.tabs = false;
    options.md = null;
  }
  // wllama's load visits beside the engine's, unless `--no-peers` (the switch itself is cleared below for `--only load`).
  const loadPeers = options.peers;
  if (options.only === 'load') {
    // An app's start-up alone, first and return visits (bench/lib/load-visit-rows.ts): JSON only, docs untouched.
    options.grid = options.formats = options.peers = options.logits = options.structured = options.tabs = false;
    options.md = null;
  }
  if (options.only === 'tabs') {
    // Tabs sharing one engine alone: JSON only, docs untouched.
    options.grid = options.formats = options.peers = options.logits = options.structured = false;
    options.md = null;
  }
  const tabsModel = options.models?.[0] ?? SMOL;
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
    structured: [],
    tabs: [],
    prefix_cache_chat: [],
    load: [],
    memory: [],
    targets: [],
    notes: [],
  };
  try {
    if (options.only === 'ort-builds') {
      const models = options.models ?? [...(hasTinyStories ? [TINYSTORIES] : []), SMOL];
      const oplan = ortBuildPlan(options, { models, cores: cpus().length });
      log(`ort-builds: ${oplan.models.join(', ')} × ${oplan.dtypes.join(', ')} × ${oplan.threads.join(', ')} threads, ${oplan.reps} alternating repetitions of each build`);
      const hasDtype = (model: string, dtype: string) => {
        try {
          return modelBytes(MODEL_ROOTS, model, dtype as 'fp32') > 0;
        } catch {
          return false;
        }
      };
      const out = await measureOrtBuilds(oplan, site.url, mirror, hasDtype, log, result.notes);
      result.ort_builds = out.rows;
      result.runtime = { ort_build: 'jspi and asyncify, side by side', chromium: out.chromium ?? chromiumOfUserAgent(out.userAgent), user_agent: out.userAgent };
      writeJson(options.json, finalize(result, started));
    }
    if (options.only === 'load') {
      const dtypes = options.dtypes.filter((d) => d === 'fp32' || d === 'q8' || d === 'q4');
      result.load_visits = await measureLoadVisits({ model: options.models?.[0] ?? SMOL, dtypes, returns: options.reps ?? 3, peers: loadPeers, threads: options.threads ?? null }, site.url, mirror, log);
      writeJson(options.json, finalize(result, started));
    }
    for (const plan of plans) {
      let out: TargetOutput;
      try {
        out = await runTarget(plan, site.url, mirror, options.threads, result.notes);
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
      if (out.runtime && (!result.runtime || plan.device === 'wasm')) {
        result.runtime = out.runtime;
        log(`onnxruntime-web build ${out.runtime.ort_build ?? 'unknown'}, Chromium ${out.runtime.chromium ?? 'unknown'} (${out.runtime.user_agent ?? 'no userAgent'})`);
      }
      if (out.adapter) result.adapter = out.adapter;
      // A checkpoint after each target: a later failure loses nothing measured so far.
      writeJson(options.json, finalize(result, started));
    }
    if (options.structured && (!options.models || options.models.includes(SMOL))) {
      try {
        result.structured.push(await measureStructured(structuredPlan(options), site.url, mirror, options.threads, log));
      } catch (e) {
        const note = `structured rows: not measured (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
      }
      try {
        // Compile times over the test suite's and libraries' schemas, and the mask on the slowest (Node).
        result.structured_compile = await measureStructuredCompile(log, options.quick ? 40 : undefined);
      } catch (e) {
        const note = `structured compile rows: not measured (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
      }
      writeJson(options.json, finalize(result, started));
    }
    if (options.tabs) {
      try {
        result.tabs.push(...(await measureTabs({ model: tabsModel, dtype: 'fp32', counts: [1, 2, 4] }, site.url, mirror, log)));
      } catch (e) {
        const note = `tabs rows: not measured (${(e as Error).message.split('\n')[0]})`;
        log(note);
        result.notes.push(note);
      }
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
  if (options.peers) {
    await runPeers(plans, formatModels, options, result);
    writeJson(options.json, finalize(result, started));
  }
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
