/**
 * Valid, mixed requests with deterministic answers (decisions; chats at temperature 0 or with a
 * seed), and how to serve one through the facade or the HTTP surface and reduce its answer to
 * what must not depend on load or order. Pure data and fetch, so browser tests use it too.
 */
import { rng } from './malformed.ts';

export type Via = 'facade' | 'http';

export type Job =
  | { kind: 'decision'; via: Via; body: Record<string, unknown> }
  | { kind: 'chat'; via: Via; stream: boolean; body: Record<string, unknown> };

/** What a served job must equal, whatever else the engine was doing. */
export type Outcome =
  | { kind: 'decision'; answers: unknown; usage: unknown }
  | { kind: 'chat'; content: string; finish: string | null; completionTokens: number | null };

const STATES = [
  'My invoice was charged twice and I want a refund today.',
  'The app crashes whenever I open the settings page on my phone.',
  'Thank you so much, the replacement arrived and works perfectly!',
  'Where is my parcel? It was due last Tuesday and tracking shows nothing.',
  'Can I upgrade my plan to the yearly one and keep my discount?',
];
const PROMPTS = ['Tell me a story about a fox.', 'Say something kind.', 'What is the weather like?', 'List three colours.', 'Write a haiku about rain.'];

/** `count` jobs from `seed`, spread over both endpoints, streamed and not, facade and HTTP. */
export function mixedJobs(seed: number, count: number): Job[] {
  const next = rng(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const jobs: Job[] = [];
  for (let i = 0; i < count; i++) {
    const via: Via = next() < 0.35 ? 'http' : 'facade';
    if (i % 2 === 0) {
      const questions: Record<string, unknown> = {
        urgent: { type: 'noul', instructions: 'Is it urgent?' },
      };
      if (next() < 0.7) questions['team'] = { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Money', tech: 'Bugs', sales: null } };
      if (next() < 0.7) questions['mood'] = { type: 'score', instructions: 'How happy?', criteria: ['upset', 'neutral', 'happy'] };
      jobs.push({ kind: 'decision', via, body: { model: 'jev', state: pick(STATES), questions, calibrate: next() < 0.3 } });
    } else {
      const seeded = next() < 0.4;
      const messages: { role: string; content: string }[] = [{ role: 'user', content: pick(PROMPTS) }];
      if (next() < 0.3) messages.unshift({ role: 'system', content: 'You are brief.' });
      const body: Record<string, unknown> = {
        model: 'jev',
        messages,
        max_tokens: 4 + Math.floor(next() * 12),
        ...(seeded ? { temperature: 0.9, seed: Math.floor(next() * 1e6) } : { temperature: 0 }),
      };
      jobs.push({ kind: 'chat', via, stream: next() < 0.6, body });
    }
  }
  return jobs;
}

export interface Surface {
  decisions: { create(body: unknown, options?: { signal?: AbortSignal }): Promise<unknown> };
  chat: { completions: { create(body: unknown, options?: { signal?: AbortSignal }): Promise<unknown> } };
  fetch: typeof fetch;
}

type ChatChunk = { choices: { delta?: { content?: string }; finish_reason?: string | null }[] };
type ChatDone = { choices: { message: { content: string }; finish_reason: string }[]; usage: { completion_tokens: number } };
type Decision = { answers: unknown; usage: unknown };

/** Serves one job and reduces its answer to an Outcome. `origin` resolves HTTP paths. */
export async function serve(surface: Surface, job: Job, origin = 'http://localhost'): Promise<Outcome> {
  if (job.kind === 'decision') {
    const res =
      job.via === 'facade'
        ? ((await surface.decisions.create(job.body)) as Decision)
        : ((await (await post(surface, `${origin}/inference/jev/api/alpha/decisions`, job.body)).json()) as Decision);
    return { kind: 'decision', answers: res.answers, usage: res.usage };
  }
  const body = { ...job.body, stream: job.stream };
  if (job.via === 'facade') {
    const res = await surface.chat.completions.create(body);
    if (!job.stream) return chatOutcome(res as ChatDone);
    let content = '';
    let finish: string | null = null;
    for await (const chunk of res as AsyncIterable<ChatChunk>) {
      content += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { kind: 'chat', content, finish, completionTokens: null };
  }
  const res = await post(surface, `${origin}/v1/chat/completions`, body);
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  if (!job.stream) return chatOutcome((await res.json()) as ChatDone);
  let content = '';
  let finish: string | null = null;
  for (const event of (await res.text()).split('\n\n')) {
    const data = event.replace(/^data: /, '').trim();
    if (data === '' || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as ChatChunk & { error?: unknown };
    if (chunk.error) throw new Error(`stream error: ${JSON.stringify(chunk.error)}`);
    content += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { kind: 'chat', content, finish, completionTokens: null };
}

function chatOutcome(res: ChatDone): Outcome {
  return { kind: 'chat', content: res.choices[0]!.message.content, finish: res.choices[0]!.finish_reason, completionTokens: res.usage.completion_tokens };
}

function post(surface: Surface, url: string, body: unknown): Promise<Response> {
  return surface.fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

/**
 * Where two outcomes differ: every number may differ by `tolerance` (answers read through the
 * prefix cache equal those from cold within 1e-6, not bit for bit), anything else must be equal.
 * Empty when they agree.
 */
export function outcomeDiff(a: unknown, b: unknown, tolerance = 1e-6, path = '$'): string[] {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= tolerance ? [] : [`${path}: ${a} vs ${b}`];
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return Object.is(a, b) ? [] : [`${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`];
  if (Array.isArray(a) !== Array.isArray(b)) return [`${path}: array vs object`];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  const out: string[] = [];
  for (const k of keys) {
    if (!(k in a) || !(k in b)) out.push(`${path}.${k}: only in ${k in a ? 'the first' : 'the second'}`);
    else out.push(...outcomeDiff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], tolerance, `${path}.${k}`));
  }
  return out;
}
