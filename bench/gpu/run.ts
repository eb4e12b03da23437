/**
 * The engine's WebGPU path outside a browser (bench/gpu/README.md): Node, with Dawn's Node
 * bindings as `navigator.gpu` (node-webgpu.ts), runs the product's Engine on onnxruntime-web, the
 * same code the Web Worker runs, over a loopback HTTP host of the generated models. For each
 * device × dtype it reports prefill and decode tokens per second and decision latency (medians),
 * with the same workloads on wasm beside it.
 *
 * CLI, through its bundle (pack.ts writes bench.mjs; run.sh runs it: `npm run bench:gpu -- …`):
 *   --models DIR      folder of models in the hub layout (default: <repo>/models)
 *   --model ID        default smollm2-135m-random (the 135M-shaped model)
 *   --device LIST     webgpu,wasm (comma-separated; default both)
 *   --dtype LIST      fp32,q4f16 (default both)
 *   --reps N          repetitions per figure (default 3); one warm-up before them
 *   --prefill N       prompt tokens of the prefill figure (default 256)
 *   --decode N        tokens of the decode figure (default 64)
 *   --state N         state tokens of the decision figure (default 512)
 *   --questions N     questions of the decision figure (default 4)
 *   --threads N       wasm threads (default 1)
 *   --json FILE       writes the results (after every row, so that a cut run keeps its rows)
 *   --md FILE         writes the Markdown table
 */
import { nodeWebGpu, gpuAdapter, type GpuAdapterInfo } from './node-webgpu.ts';
import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { dirname, join, normalize, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ChatCompletionChunk, DecisionResponse, Question } from '../../src/contract/index.ts';
import { env } from '@huggingface/transformers';
import * as ortWeb from 'onnxruntime-web/webgpu';
import { Engine } from '../../src/engine/engine.ts';
import { webGpuOrtBuild } from '../../src/engine/runtime/ort-build.ts';
import type { DeviceChoice, DtypeChoice } from '../../src/protocol/engine-api.ts';
import { proseOfTokens, questionPool } from '../page/texts.ts';
import { gpuRowsMarkdown, median, type GpuRow, type GpuRun } from './report.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: resolve(import.meta.dirname ?? '.', '../../models') },
    model: { type: 'string', default: 'smollm2-135m-random' },
    device: { type: 'string', default: 'webgpu,wasm' },
    dtype: { type: 'string', default: 'fp32,q4f16' },
    reps: { type: 'string', default: '3' },
    prefill: { type: 'string', default: '256' },
    decode: { type: 'string', default: '64' },
    state: { type: 'string', default: '512' },
    questions: { type: 'string', default: '4' },
    threads: { type: 'string', default: '1' },
    ort: { type: 'string' },
    json: { type: 'string' },
    md: { type: 'string' },
  },
});

const reps = Number(values.reps);
const prefillTokens = Number(values.prefill);
const decodeTokens = Number(values.decode);
const stateTokens = Number(values.state);
const questionCount = Number(values.questions);
const threads = Number(values.threads);
const log = (...a: unknown[]) => console.log('[gpu-bench]', ...a);

/** The hub layout over HTTP, as the page's host serves it: `/{model}/resolve/main/{file}`. */
function modelHost(root: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const m = /^\/(.+?)\/resolve\/[^/]+\/(.+)$/.exec(decodeURIComponent((req.url ?? '').replace(/\?.*$/, '')));
    const path = m ? normalize(join(root, m[1]!, m[2]!)) : null;
    if (!path || !path.startsWith(root) || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404).end();
      return;
    }
    const size = statSync(path).size;
    res.writeHead(200, { 'content-length': String(size), 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') res.end();
    else createReadStream(path).pipe(res);
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })));
}

let calls = 0;
const call = () => ({ id: `gpu-bench-${++calls}` });

/** One greedy streamed chat from cold: time to the first content token, and the decode rate after it. */
async function chatOnce(engine: Engine, content: string, maxTokens: number) {
  await engine.clearCache();
  let first = -1;
  const t0 = performance.now();
  const res = await engine.chat({ model: 'jev', messages: [{ role: 'user', content }], max_tokens: maxTokens, temperature: 0, stream: true }, call(), (chunk: ChatCompletionChunk) => {
    if (chunk.choices[0]?.delta?.content && first < 0) first = performance.now();
  });
  const end = performance.now();
  if (first < 0) first = end;
  const n = res.usage.completion_tokens;
  return { ttftMs: first - t0, promptTokens: res.usage.prompt_tokens, tokens: n, decodeTps: n > 1 && end > first ? ((n - 1) * 1000) / (end - first) : null };
}

async function measure(host: string, device: DeviceChoice, dtype: DtypeChoice, adapter: GpuAdapterInfo | null): Promise<GpuRow> {
  const runtime = { threads, ortBase: values.ort ?? defaultOrtBase() };
  const engine = new Engine({ runtime, prefixCacheBytes: 0 });
  const t0 = performance.now();
  const status = await engine.load({ model: values.model!, host, device, dtype });
  const loadMs = performance.now() - t0;
  const lm = engine.languageModel!;
  log(`${device} ${dtype}: loaded in ${Math.round(loadMs)} ms (${status.device ?? device})`);
  const prompt = proseOfTokens(lm.tokenizer, prefillTokens, 7).text;
  const story = proseOfTokens(lm.tokenizer, 16, 11).text;
  const state = proseOfTokens(lm.tokenizer, stateTokens, 13).text;
  const questions: Record<string, Question> = {};
  questionPool().slice(0, questionCount).forEach((q, i) => (questions[`q${i}`] = q));

  const prefill: number[] = [];
  const decode: number[] = [];
  const decision: number[] = [];
  let promptTokens = 0;
  let decodedTokens = 0;
  let answers: Record<string, Record<string, number>> = {};
  for (let r = 0; r <= reps; r++) {
    const p = await chatOnce(engine, prompt, 1);
    const d = await chatOnce(engine, story, decodeTokens);
    await engine.clearCache();
    const t = performance.now();
    const res = await engine.decide({ model: 'jev', state, questions }, call());
    const decisionMs = performance.now() - t;
    answers = answerProbabilities(res.answers);
    if (r === 0) continue; // warm-up: shaders compiled, buffers allocated
    promptTokens = p.promptTokens;
    decodedTokens = d.tokens;
    prefill.push((p.promptTokens * 1000) / p.ttftMs);
    if (d.decodeTps !== null) decode.push(d.decodeTps);
    decision.push(decisionMs);
  }
  await engine.unload();
  return {
    device,
    dtype,
    adapter: device === 'webgpu' ? adapter : null,
    threads: device === 'wasm' ? threads : null,
    load_ms: Math.round(loadMs),
    prompt_tokens: promptTokens,
    prefill_tps: median(prefill),
    prefill_tps_all: prefill,
    decode_tokens: decodedTokens,
    decode_tps: decode.length ? median(decode) : null,
    decode_tps_all: decode,
    decision_ms: median(decision),
    decision_ms_all: decision,
    state_tokens: stateTokens,
    questions: questionCount,
    int8_head: status.int8Head ?? null,
    answers,
  };
}

/** Each question's probability per answer (`noul`: true and false), to compare devices. */
function answerProbabilities(answers: DecisionResponse['answers']): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [key, a] of Object.entries(answers)) out[key] = a.type === 'noul' ? { true: a.noul, false: 1 - a.noul } : { ...(a.probabilities as Record<string, number>) };
  return out;
}

/** onnxruntime-web's own dist folder (here), or the packed copy beside the bundle (run.sh). */
function defaultOrtBase(): string {
  return process.env['JEV_ORT_DIR'] ?? join(dirname(import.meta.dirname ?? '.'), '../node_modules/onnxruntime-web/dist/');
}

function write(run: GpuRun): void {
  for (const [file, text] of [
    [values.json, JSON.stringify(run, null, 2)],
    [values.md, gpuRowsMarkdown(run)],
  ] as const) {
    if (!file) continue;
    mkdirSync(dirname(resolve(file)), { recursive: true });
    writeFileSync(file, text);
  }
}

// transformers.js must run the onnxruntime-web the engine imports (its web build, as the app and
// the pack bundle it). Under tsx it is its Node build, which carries an onnxruntime-web of its own:
// the engine's session rewrites would then never see its sessions. Refuse that before any load.
if (env.backends.onnx?.wasm !== ortWeb.env.wasm) {
  console.error('[gpu-bench] run the bundle, not this file: `npm run bench:gpu:pack -- --no-xz`, then `npm run bench:gpu` (bench/gpu/README.md)');
  process.exit(2);
}
env.useFSCache = false;

const adapter = await gpuAdapter();
const run: GpuRun = {
  date: new Date().toISOString(),
  machine: `${cpus()[0]?.model?.trim() ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
  node: process.version,
  // The WebGPU build: the rows run WebGPU first, and onnxruntime keeps its first load's build for the process (ort-build.ts).
  ort_build: webGpuOrtBuild(),
  dawn: nodeWebGpu.dawn,
  webgpu_error: adapter ? null : (nodeWebGpu.error ?? 'no WebGPU adapter'),
  adapter,
  model: values.model!,
  commit: process.env['JEV_COMMIT'] ?? null,
  rows: [],
  skipped: [],
};
log(adapter ? `adapter: ${[adapter.vendor, adapter.architecture, adapter.description].filter(Boolean).join(' / ')}, shader-f16 ${adapter.shaderF16}` : `no WebGPU: ${run.webgpu_error}`);
const host = await modelHost(resolve(values.models!));
try {
  for (const device of values.device!.split(',') as DeviceChoice[]) {
    for (const dtype of values.dtype!.split(',') as DtypeChoice[]) {
      if (device === 'webgpu' && !adapter) {
        run.skipped.push({ device, dtype, why: run.webgpu_error ?? 'no WebGPU adapter' });
        continue;
      }
      try {
        run.rows.push(await measure(host.url, device, dtype, adapter));
        log(JSON.stringify(run.rows.at(-1)));
      } catch (e) {
        const why = (e as Error).message ?? String(e);
        run.skipped.push({ device, dtype, why });
        log(`${device} ${dtype}: ${why}`);
      }
      write(run);
    }
  }
} finally {
  host.server.close();
}
write(run);
console.log(gpuRowsMarkdown(run));
process.exit(run.rows.length ? 0 : 1);
