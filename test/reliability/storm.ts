/**
 * Many concurrent requests while a fault strikes (e2e/reliability-faults.spec.ts), run in the page:
 * `count` requests over `distinct` different bodies (decisions, plain and streamed chats), half
 * through the worker facade and half through the HTTP surface, all sent at once; the fault strikes
 * once `strikeAfter` of them have settled. Each request is classified by how it ended — answered,
 * refused (status and code), hung past the deadline, or broken (a throw that is not the engine's
 * error, a stream with two ends or none) — with the number of ends it had, so that a request
 * answered twice shows. Pure fetch and facade calls: bundled into the harness.
 */
import { statusOf, type ErrorCode } from '../../src/contract/errors.ts';
import { mixedJobs, type Job, type Via } from './workload.ts';

export interface StormEnv {
  jev: any;
  fetch: typeof fetch;
}

export type StormOutcome =
  | { outcome: 'answered'; answer: unknown }
  | { outcome: 'refused'; status: number; code: string; message: string; retriable: boolean }
  | { outcome: 'hung' }
  | { outcome: 'broken'; message: string };

export type StormResult = StormOutcome & { r: number; job: number; via: Via; kind: Job['kind']; stream: boolean; ends: number };

export interface StormOptions {
  seed: number;
  count?: number;
  distinct?: number;
  /** A request not settled by then is `hung` (a generous bound that fails a test, not a speed check). */
  deadlineMs?: number;
  /** How many requests settle before the fault strikes (0: at once, before any is answered). */
  strikeAfter?: number;
  strike: () => Promise<unknown>;
}

/** The distinct bodies of a storm: decisions and chats with deterministic answers. */
export function stormJobs(seed: number, distinct = 10): Job[] {
  return mixedJobs(seed, distinct);
}

/** What a served body must equal, whatever else happened: a decision's answers, a chat's text and finish. */
const answerOf = (kind: Job['kind'], res: any): unknown => (kind === 'decision' ? res.answers : { content: res.choices[0].message.content, finish: res.choices[0].finish_reason });

const refusal = (status: number, error: any): StormOutcome => ({ outcome: 'refused', status, code: String(error?.code), message: String(error?.message), retriable: error?.retriable === true });

function thrown(e: any): StormOutcome {
  if (e?.name === 'JevError' && typeof e.status === 'number') return refusal(e.status, e.error ?? e);
  return { outcome: 'broken', message: `${e?.name}: ${e?.message ?? e}` };
}

/** Serves one body through one surface; `ends` counts the stream's ends (finish chunks, `[DONE]`, error events). */
async function serveOne(env: StormEnv, job: Job, via: Via): Promise<StormOutcome & { ends: number }> {
  const stream = job.kind === 'chat' && job.stream;
  const body = job.kind === 'chat' ? { ...job.body, stream } : job.body;
  if (via === 'facade') {
    try {
      if (job.kind === 'decision') return { outcome: 'answered', answer: answerOf('decision', await env.jev.decisions.create(body)), ends: 1 };
      const res = await env.jev.chat.completions.create(body);
      if (!stream) return { outcome: 'answered', answer: answerOf('chat', res), ends: 1 };
      let content = '';
      let finish: string | null = null;
      let ends = 0;
      try {
        for await (const chunk of res) {
          content += chunk.choices[0]?.delta?.content ?? '';
          if (chunk.choices[0]?.finish_reason) (finish = chunk.choices[0].finish_reason), ends++;
        }
      } catch (e) {
        return { ...thrown(e), ends: ends + 1 };
      }
      return { outcome: 'answered', answer: { content, finish }, ends };
    } catch (e) {
      return { ...thrown(e), ends: 1 };
    }
  }
  const path = job.kind === 'decision' ? '/inference/jev/api/alpha/decisions' : '/v1/chat/completions';
  let res: Response;
  try {
    res = await env.fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  } catch (e) {
    return { outcome: 'broken', message: `fetch failed: ${String(e)}`, ends: 0 };
  }
  if (res.status !== 200 || !stream) {
    const json = await res.json().catch(() => null);
    if (res.status !== 200) return { ...refusal(res.status, json?.error), ends: 1 };
    return { outcome: 'answered', answer: answerOf(job.kind, json), ends: 1 };
  }
  let content = '';
  let finish: string | null = null;
  let ends = 0;
  let error: any = null;
  for (const event of (await res.text()).split('\n\n')) {
    const data = event.replace(/^data: /, '').trim();
    if (data === '') continue;
    if (data === '[DONE]') {
      ends++;
      continue;
    }
    const chunk = JSON.parse(data);
    if (chunk.error) (error = chunk.error), ends++;
    else {
      content += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    }
  }
  // A stream that had begun (200) and then failed ends with an error event: its code says the status.
  if (error) return { ...refusal(statusOf(error.code as ErrorCode), error), ends };
  return { outcome: 'answered', answer: { content, finish }, ends };
}

/** The answers of the storm's distinct bodies, each served alone through the facade, one after another. */
export async function loneAnswers(env: StormEnv, seed: number, distinct = 10): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const job of stormJobs(seed, distinct)) {
    const r = await serveOne(env, { ...job, ...(job.kind === 'chat' ? { stream: false } : {}) } as Job, 'facade');
    if (r.outcome !== 'answered') throw new Error(`a lone request was not answered: ${JSON.stringify(r)}`);
    out.push(r.answer);
  }
  return out;
}

/** Sends the storm, strikes, and waits for every request to end (or its deadline). */
export async function storm(env: StormEnv, o: StormOptions): Promise<{ results: StormResult[]; struck: unknown }> {
  const count = o.count ?? 200;
  const distinct = o.distinct ?? 10;
  const jobs = stormJobs(o.seed, distinct);
  let settled = 0;
  let strike: Promise<unknown> | null = null;
  const maybeStrike = () => {
    if (!strike && settled >= (o.strikeAfter ?? 0)) strike = o.strike().catch((e) => `the strike threw: ${String(e)}`);
  };
  maybeStrike();
  const results = await Promise.all(
    Array.from({ length: count }, async (_, r): Promise<StormResult> => {
      const job = Math.floor(r / 2) % distinct;
      const via: Via = r % 2 === 0 ? 'facade' : 'http';
      const base = jobs[job]!;
      const meta = { r, job, via, kind: base.kind, stream: base.kind === 'chat' && base.stream };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<StormOutcome & { ends: number }>((resolve) => (timer = setTimeout(() => resolve({ outcome: 'hung', ends: 0 }), o.deadlineMs ?? 120_000)));
      const out = await Promise.race([serveOne(env, base, via), deadline]);
      clearTimeout(timer);
      settled++;
      maybeStrike();
      return { ...meta, ...out } as StormResult;
    }),
  );
  return { results, struck: await (strike ?? Promise.resolve(null)) };
}
