/**
 * `npm run bench -- --only serve`, the embedded rows: `jev-local serve` with its engine
 * in-process (src/server/embedded-engine.ts: the page's engine on onnxruntime-node, in a thread)
 * beside llama.cpp native (node-llama-cpp's prebuilt CPU binary) on the same weights as GGUF, on
 * the 135M-shaped generated model, fp32, q8 and q4 (GGUF F32, Q8_0, Q4_0).
 *
 * For each: prefill tok/s (a prompt of PROMPT_WORDS words, never seen before, so the prefix
 * cache does not skip it), decode tok/s (the time of 1 + DECODE_TOKENS generated tokens minus the
 * time of 1, over DECODE_TOKENS), and the process's RSS once the model is loaded. Ours is timed
 * as served, over HTTP (chat completions, greedy); llama.cpp through its own API, in this process.
 * For ours also: a decision's latency over HTTP, the same decision asked of the engine directly
 * (`server.engine.decide`: the thread's engine, past the HTTP handler, the guard, validation in
 * the facade and the admission queue), and the server's overhead, the median difference.
 *
 * Threads: both at 1 and at every core (ours through `--threads`, onnxruntime-node's intra-op
 * threads; llama.cpp through its context's `threads`).
 * The page's wasm engine is measured in Chromium by the main bench (docs/benchmarks.md), not here.
 * Rows run in turn in one process: `rss_mb` is the process's RSS after that row's load (memory a
 * previous row freed may not have been returned to the system).
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { DtypeChoice } from '../../src/protocol/engine-api.ts';
import { startServer } from '../../src/server/serve.ts';
import { embeddedOptions } from '../../test/server/support/served.ts';
import { round } from './measure.ts';
import { loadNodeLlamaCpp } from './native-peer.ts';
import { measureBareSession } from './bare-session.ts';
import { median } from './schema.ts';
import { DECODE_TOKENS, freshPrompt, PROMPT_WORDS, servedSpeed } from './served-timing.ts';

export interface EmbeddedServeRow {
  /**
   * `jev-embedded`: jev-local serve's in-process engine; `llama.cpp`: node-llama-cpp's prebuilt
   * native build; `onnxruntime-node`: the session the embedded engine creates, alone
   * (bare-session.ts: how fast this runtime steps, in a process of its own with no engine around it).
   */
  engine: 'jev-embedded' | 'llama.cpp' | 'onnxruntime-node';
  model: string;
  dtype: 'fp32' | 'q8' | 'q4';
  /** The GGUF file llama.cpp read (null for ours: the ONNX file of `dtype`). */
  gguf: string | null;
  /** Compute threads: 1, or every core (`--threads` for ours, the context's `threads` for llama.cpp). */
  threads: number;
  prefill_tokens: number;
  /** Median over the repetitions. */
  prefill_tok_s: number;
  decode_tokens: number;
  decode_tok_s: number;
  /** A decision (one noul question), median over HTTP; null for llama.cpp (no decision API). */
  decision_ms: number | null;
  /** The same decision asked of the engine directly (past the server), median. */
  engine_decision_ms: number | null;
  /** Median of decision − engine_decision over the repetitions: the server's own cost per decision. */
  overhead_ms: number | null;
  /** The process's resident memory once the row's model is loaded (MiB). */
  rss_mb: number;
  reps: number;
}

export const EMBEDDED_MODEL = 'smollm2-135m-random';
/** Decision pairs (over HTTP, then direct) per repetition of the row. */
const DECISION_PAIRS_PER_REP = 5;
const GGUF: Record<EmbeddedServeRow['dtype'], string> = { fp32: 'model-f32.gguf', q8: 'model-q8_0.gguf', q4: 'model-q4_0.gguf' };
const rssMb = () => round(process.memoryUsage().rss / 2 ** 20, 0);

export async function measureEmbeddedServe(options: { root: string; reps: number; log: (...a: unknown[]) => void }): Promise<EmbeddedServeRow[]> {
  const rows: EmbeddedServeRow[] = [];
  for (const dtype of ['fp32', 'q8', 'q4'] as const) {
    for (const threads of [...new Set([1, cpus().length])]) {
      const ours = await measureOurs(options.root, dtype, threads, options.reps, options.log);
      rows.push(ours);
      // The session alone over as many positions as the served prompt filled: a decode step's cost grows with the cache it reads and copies.
      rows.push(await measureBare(options.root, dtype, threads, options.reps, ours.prefill_tokens, options.log));
      rows.push(await measureLlamaCpp(options.root, dtype, threads, options.reps, options.log));
    }
  }
  return rows;
}

async function measureOurs(root: string, dtype: EmbeddedServeRow['dtype'], threads: number, reps: number, log: (...a: unknown[]) => void): Promise<EmbeddedServeRow> {
  const server = await startServer(embeddedOptions(EMBEDDED_MODEL, { host: root, dtype: dtype as DtypeChoice, threads, timeoutMs: 600_000 }));
  try {
    const rss = rssMb();
    const speed = await servedSpeed(server.url, reps);
    const decision = { model: 'jev', state: freshPrompt(7, 48), questions: { refund: { type: 'noul', instructions: 'Is a refund asked for?' } } };
    const viaHttp: number[] = [];
    const direct: number[] = [];
    const overhead: number[] = [];
    // The overhead is a difference of two latencies that vary by more than it (tens of ms at q8,
    // where a decision takes ~200 ms): paired, HTTP then direct, and many more pairs than `reps`.
    for (let rep = 0; rep < DECISION_PAIRS_PER_REP * reps + 1; rep++) {
      let t = performance.now();
      const res = await fetch(`${server.url}/inference/jev/api/alpha/decisions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(decision) });
      if (res.status !== 200) throw new Error(`embedded bench: a decision answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      const http = performance.now() - t;
      t = performance.now();
      await server.engine.decide(decision, { id: `bench-${rep}` });
      const own = performance.now() - t;
      if (rep === 0) continue; // the first fills the prefix cache
      viaHttp.push(http);
      direct.push(own);
      overhead.push(http - own);
    }
    const row: EmbeddedServeRow = {
      engine: 'jev-embedded',
      model: EMBEDDED_MODEL,
      dtype,
      gguf: null,
      threads,
      ...speed,
      decision_ms: round(median(viaHttp), 2),
      engine_decision_ms: round(median(direct), 2),
      overhead_ms: round(median(overhead), 2),
      rss_mb: rss,
      reps,
    };
    log(`  jev-embedded ${dtype} (${threads} thread${threads === 1 ? '' : 's'}): prefill ${row.prefill_tok_s} tok/s, decode ${row.decode_tok_s} tok/s, decision ${row.decision_ms} ms (overhead ${row.overhead_ms} ms), rss ${rss} MiB`);
    return row;
  } finally {
    await server.close();
  }
}

async function measureBare(root: string, dtype: EmbeddedServeRow['dtype'], threads: number, reps: number, promptTokens: number, log: (...a: unknown[]) => void): Promise<EmbeddedServeRow> {
  const times = await measureBareSession({ root, model: EMBEDDED_MODEL, dtype, threads, reps, promptTokens });
  const row: EmbeddedServeRow = { engine: 'onnxruntime-node', model: EMBEDDED_MODEL, dtype, gguf: null, threads, ...times, decision_ms: null, engine_decision_ms: null, overhead_ms: null, rss_mb: rssMb(), reps };
  log(`  onnxruntime-node session alone ${dtype} (${threads} thread${threads === 1 ? '' : 's'}): prefill ${row.prefill_tok_s} tok/s, decode ${row.decode_tok_s} tok/s`);
  return row;
}

async function measureLlamaCpp(root: string, dtype: EmbeddedServeRow['dtype'], threads: number, reps: number, log: (...a: unknown[]) => void): Promise<EmbeddedServeRow> {
  // Installed on demand (native-peer.ts): its prebuilt CPU binary, never a build.
  const { getLlama } = await loadNodeLlamaCpp(log);
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: 'error' as never });
  const file = GGUF[dtype];
  const model = await llama.loadModel({ modelPath: join(root, EMBEDDED_MODEL, 'gguf', file) });
  const context = await model.createContext({ contextSize: 512, threads, sequences: 1 });
  try {
    const rss = rssMb();
    const sequence = context.getSequence();
    const promptOf = (seed: number) => model.tokenize(freshPrompt(seed, PROMPT_WORDS));
    const prefill: number[] = [];
    const decode: number[] = [];
    let promptTokens = 0;
    for (let rep = -1; rep < reps; rep++) {
      await sequence.clearHistory();
      const prompt = promptOf(3000 + rep);
      promptTokens = prompt.length;
      let t = performance.now();
      await sequence.evaluateWithoutGeneratingNewTokens(prompt);
      const prefillMs = performance.now() - t;
      t = performance.now();
      let n = 0;
      for await (const _ of sequence.evaluate([prompt.at(-1)!], { temperature: 0 })) if (++n >= DECODE_TOKENS) break;
      const decodeMs = performance.now() - t;
      if (rep < 0) continue; // warm-up
      prefill.push(prompt.length / (prefillMs / 1000));
      decode.push(n / (decodeMs / 1000));
    }
    const row: EmbeddedServeRow = {
      engine: 'llama.cpp',
      model: EMBEDDED_MODEL,
      dtype,
      gguf: file,
      threads,
      prefill_tokens: promptTokens,
      prefill_tok_s: round(median(prefill), 1),
      decode_tokens: DECODE_TOKENS,
      decode_tok_s: round(median(decode), 1),
      decision_ms: null,
      engine_decision_ms: null,
      overhead_ms: null,
      rss_mb: rss,
      reps,
    };
    log(`  llama.cpp ${dtype} (${threads} thread${threads === 1 ? '' : 's'}): prefill ${row.prefill_tok_s} tok/s, decode ${row.decode_tok_s} tok/s, rss ${rss} MiB`);
    return row;
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}
