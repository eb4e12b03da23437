/**
 * `npm run bench -- --only serve`: the server in front of a serving engine (src/server/,
 * docs/scale-out.md), measured in Node against the loopback SGLang and vLLM of test/server (a real
 * model, onnxruntime-node). For Q = 1, 4, 16 questions on one state: the client's latency through
 * the server; the latency of the very request the server sent the engine, sent to it directly
 * (what a client calling the engine itself would wait); the server's overhead, the difference
 * (parsing and validation, tokenizing and planning, the extra HTTP hop, the label arithmetic);
 * and the engine requests and prompts (continuations) per decision. The two are timed in turn,
 * repetition by repetition, and their medians taken. So that the engine's own compute (a real
 * model on this CPU, noisy under other load) does not drown the server's milliseconds, the
 * loopback computes each distinct request once (its time is `loopback_compute_ms`) and replays it
 * afterwards: the timed repetitions measure the server and the HTTP, not the model. Each is also
 * measured in CPU time (`process.cpuUsage`, the client, the server and the loopback share this
 * process): the difference of the two paths' CPU is the server's own work, which other load on the
 * machine stretches far less than it stretches wall time.
 *
 * Each Q is measured twice. `state: "same"`: the same state and questions every repetition — the
 * server then tokenizes nothing (its planning memo, src/engine/decision/state-memo.ts), as for a
 * client asking again about one document. `state: "new"`: a state never seen before every
 * repetition — the whole tokenization each time (the state once, and each question's whole-prompt
 * check); its engine replies are computed beforehand through a second server with a memo of its
 * own, so that the timed request is replayed too.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Question } from '../../src/contract/index.ts';
import type { BackendKind } from '../../src/server/cli-args.ts';
import { startServer } from '../../src/server/serve.ts';
import { serveOptions, sharedModel, startLoopback } from '../../test/server/support/served.ts';
import { commitId, machineDescription } from '../../scripts/machine/machine.ts';
import { GENERATED } from '../../test/support/models.ts';
import { measureEmbeddedServe } from './embedded-serve-rows.ts';
import { round } from './measure.ts';
import { median } from './schema.ts';

export interface ServeResult {
  backend: BackendKind;
  model: string;
  questions: number;
  /** `same`: one state and question set every repetition (planning memoized); `new`: a state never seen before each time. */
  state: 'same' | 'new';
  state_tokens: number;
  /** Median latency of one decision as the client sees it, through the server. */
  total_ms: number;
  /** Median latency of the server's engine request(s) for that decision, sent to the engine directly. */
  backend_ms: number;
  /** Median of total − backend over the repetitions: what the server adds. */
  overhead_ms: number;
  /** Median of the CPU milliseconds the path through the server took beyond the direct path: the server's own work. */
  overhead_cpu_ms: number;
  /** The loopback model's own time for the decision's request(s), computed once (CPU, onnxruntime-node). */
  loopback_compute_ms: number;
  /** Engine requests per decision (the same every repetition). */
  backend_requests: number;
  /** Prompts in those requests (one per label continuation). */
  backend_prompts: number;
  reps: number;
}

/** Untimed decisions through each server before its rows. */
const WARM_UP = 30;

const STATE_SENTENCE = 'The customer wrote that the parcel arrived two days late, the box was crushed, and the invoice shows a charge twice. ';

const QUESTION_KINDS: Question[] = [
  { type: 'noul', instructions: 'Is the customer asking for money back?', criteria: { true: 'A refund is asked for', false: null } },
  { type: 'choice', instructions: 'Which team should take it?', criteria: { billing: 'Charges and refunds', shipping: 'Parcels and delivery', support: 'Anything else' } },
  { type: 'score', instructions: 'How angry is the customer?', criteria: ['calm', 'annoyed', 'angry', 'furious'] },
];

export async function measureServe(options: { model: string; reps: number; stateSentences: number; log: (...a: unknown[]) => void }): Promise<ServeResult[]> {
  const rows: ServeResult[] = [];
  const model = await sharedModel(options.model);
  // Each distinct request computed once, then replayed (see above).
  const compute = model.promptLogProbs.bind(model);
  const replies = new Map<string, ReturnType<typeof compute>>();
  model.promptLogProbs = (items) => {
    const key = JSON.stringify(items);
    let reply = replies.get(key);
    if (!reply) replies.set(key, (reply = compute(items)));
    return reply;
  };
  const state = STATE_SENTENCE.repeat(options.stateSentences);
  const stateTokens = model.lm.encode(state, false).length;
  for (const backend of ['sglang', 'vllm'] as const) {
    const loopback = await startLoopback(backend, model);
    const server = await startServer(serveOptions(backend, loopback.url, options.model, { timeoutMs: 600_000 }));
    // Computes a new state's engine replies before it is timed (its own planning memo: the timed server's stays cold).
    const warmer = await startServer(serveOptions(backend, loopback.url, options.model, { timeoutMs: 600_000 }));
    try {
      // The server warmed up first, untimed: decisions of 1, 4 and 16 questions on states and
      // questions none of the rows asks (so no row finds its plan memoized), so that the first row
      // (Q = 1) does not carry V8's compilation of the server's paths, which the later rows do not.
      for (let i = 0; i < WARM_UP; i++) {
        const q = [1, 4, 16][i % 3]!;
        const questions = Object.fromEntries(Array.from({ length: q }, (_, j) => [`w${j}`, { ...QUESTION_KINDS[j % 3]!, instructions: `Warm-up ${i}: ${QUESTION_KINDS[j % 3]!.instructions}` }]));
        if ((await post(`${server.url}/inference/jev/api/alpha/decisions`, JSON.stringify({ model: 'jev', state: `Warm-up ${i}. ${state}`, questions }))) !== 200) throw new Error('serve bench: a warm-up decision failed');
      }
      for (const q of [1, 4, 16]) {
        const questions = Object.fromEntries(Array.from({ length: q }, (_, i) => [`q${i}`, { ...QUESTION_KINDS[i % 3]!, instructions: `${QUESTION_KINDS[i % 3]!.instructions} (${i})` }]));
        for (const kind of ['same', 'new'] as const) {
          // A new state on vLLM: the loopback prefills every continuation (seconds at Q = 16), so fewer repetitions.
          const reps = kind === 'new' && backend === 'vllm' ? Math.min(options.reps, 10) : options.reps;
          // A new state is new to every row too (`Q`: the rows before this one never saw it).
          const bodyOf = (rep: number) => JSON.stringify({ model: 'jev', state: kind === 'same' ? state : `${state}(Case ${q}-${rep + 2}.)`, questions });
          rows.push(await measureOne({ server: server.url, warmer: kind === 'new' ? warmer.url : null, loopback, bodyOf, reps }, { backend, model: options.model, questions: q, state: kind, state_tokens: stateTokens }, options.log));
        }
      }
    } finally {
      await server.close();
      await warmer.close();
      await loopback.close();
    }
  }
  return rows;
}

interface Setup {
  server: string;
  /** Where a repetition's body goes first, untimed (new states); null: the timed server alone. */
  warmer: string | null;
  loopback: Awaited<ReturnType<typeof startLoopback>>;
  bodyOf: (rep: number) => string;
  reps: number;
}

const post = async (url: string, body: string) => {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  await res.json();
  return res.status;
};

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One row: repetitions of one decision through the server and, straight after, its engine request(s) sent directly. */
async function measureOne(x: Setup, row: Pick<ServeResult, 'backend' | 'model' | 'questions' | 'state' | 'state_tokens'>, log: (...a: unknown[]) => void): Promise<ServeResult> {
  const totals: number[] = [];
  const backends: number[] = [];
  const cpuOverheads: number[] = [];
  let requests = 0;
  let prompts = 0;
  let computeMs = 0;
  for (let rep = -1; rep < x.reps; rep++) {
    const body = x.bodyOf(rep + 1);
    if (x.warmer) {
      const before = x.loopback.log.length;
      await post(`${x.warmer}/inference/jev/api/alpha/decisions`, body);
      computeMs += x.loopback.log.slice(before).reduce((n, c) => n + c.ms, 0);
    }
    const before = x.loopback.log.length;
    const cpuStarted = cpuMs();
    const started = performance.now();
    const status = await post(`${x.server}/inference/jev/api/alpha/decisions`, body);
    const total = performance.now() - started;
    const cpuThrough = cpuMs() - cpuStarted;
    if (status !== 200) throw new Error(`serve bench: status ${status}`);
    const calls = x.loopback.log.slice(before);
    // The same engine request(s), straight to the engine.
    let direct = 0;
    const cpuDirectStarted = cpuMs();
    for (const c of calls) {
      const t = performance.now();
      await post(`${x.loopback.url}${c.path}`, JSON.stringify(c.body));
      direct += performance.now() - t;
    }
    const cpuDirect = cpuMs() - cpuDirectStarted;
    if (rep < 0) {
      if (!x.warmer) computeMs = calls.reduce((n, c) => n + c.ms, 0); // the model's first (real) computation
      continue;
    }
    totals.push(total);
    backends.push(direct);
    cpuOverheads.push(cpuThrough - cpuDirect);
    requests = calls.length;
    prompts = calls.reduce((s, c) => s + ((c.body['input_ids'] ?? c.body['prompt']) as unknown[]).length, 0);
  }
  const overheads = totals.map((t, i) => t - backends[i]!);
  const out: ServeResult = {
    ...row,
    total_ms: round(median(totals), 2),
    backend_ms: round(median(backends), 2),
    overhead_ms: round(median(overheads), 2),
    overhead_cpu_ms: round(median(cpuOverheads), 2),
    loopback_compute_ms: round(x.warmer ? computeMs / (x.reps + 1) : computeMs, 1),
    backend_requests: requests,
    backend_prompts: prompts,
    reps: x.reps,
  };
  log(
    `serve ${row.backend} Q=${row.questions} ${row.state} state: through the server ${out.total_ms} ms, engine direct ${out.backend_ms} ms, overhead ${out.overhead_ms} ms wall, ` +
      `${out.overhead_cpu_ms} ms CPU (loopback model ${out.loopback_compute_ms} ms), ${requests} request(s), ${prompts} prompts`,
  );
  return out;
}

/** The serve rows alone, written as JSON (`npm run bench -- --only serve --json FILE`). */
// 200: at 40 a few slow repetitions on a shared machine moved a median by a few tenths of a millisecond (docs/scale-out.md).
export async function runServeOnly(json: string, log: (...a: unknown[]) => void, repo: string, reps = 200): Promise<void> {
  const serve = await measureServe({ model: 'tiny-random-llama', reps, stateSentences: 8, log });
  // The engine in-process beside llama.cpp native (embedded-serve-rows.ts): a real model's compute, so far fewer repetitions.
  const embedded = await measureEmbeddedServe({ root: GENERATED, reps: Math.max(1, Math.min(reps, 5)), log });
  const result = { schema: 'jev-bench/1', machine: machineDescription(), commit: commitId(repo), date: new Date().toISOString(), serve, embedded };
  mkdirSync(dirname(json), { recursive: true });
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  log(`wrote ${json}`);
}
