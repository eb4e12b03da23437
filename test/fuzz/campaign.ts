/**
 * A fuzz campaign: fast-check drives mutated bodies (arbitraries.ts) through two surfaces of one
 * engine — the facade (`client.decisions.create` / `client.chat.completions.create`) and the HTTP
 * surface (`client.fetch`, or the service worker's `fetch` in a page) — and checks each outcome:
 *
 * - served: the answer is a decision or chat completion of the right shape (a mutation may leave the
 *   body valid); refused: a 4xx with a message, and a `param` that is null or names a field at or
 *   above the mutated one or a top-level field of the body; never a 5xx, never a throw that is not a
 *   JevError, never a hang (each call has a deadline);
 * - both surfaces agree: the same status, code and param for the same JSON body;
 * - the engine keeps serving: every `probeEvery` cases a valid probe gets the answer it got first.
 *
 * A failing case is shrunk by fast-check and reported with its seed and path, so it reproduces with
 * `npm run fuzz -- --seed S --path P`. Pure TypeScript over fetch: the browser tests run it too.
 */
import fc from 'fast-check';
import { applyMutation, describeCase, fuzzCase, type Endpoint, type FuzzCase } from './arbitraries.ts';
import { jsonText } from './json-text.ts';

export const PATHS: Record<Endpoint, string> = { decisions: '/inference/jev/api/alpha/decisions', decisions_openai: '/v1/decisions', extractions: '/v1/extractions', chat: '/v1/chat/completions' };

/** The facade's create for each endpoint, on any client with the facade's shape (a JevClient, or `window.jev` in a page). */
export interface FacadeLike {
  decisions: { create(body: never): Promise<unknown>; createOpenAI(body: never): Promise<unknown> };
  extractions: { create(body: never): Promise<unknown> };
  chat: { completions: { create(body: never): Promise<unknown> } };
}
export function facadeOf(client: FacadeLike): Surfaces['facade'] {
  return (endpoint, body) => {
    const b = body as never;
    if (endpoint === 'decisions') return client.decisions.create(b);
    if (endpoint === 'decisions_openai') return client.decisions.createOpenAI(b);
    if (endpoint === 'extractions') return client.extractions.create(b);
    return client.chat.completions.create(b);
  };
}

/** What a surface answered, reduced to what both must agree on. */
export type Outcome = { served: true; shape: string | null } | { served: false; status: number; code: string; param: string | null; message: string };

export interface Surfaces {
  /** The facade's create for the endpoint (rejects with a JevError-like `{status, error}`). */
  facade(endpoint: Endpoint, body: unknown): Promise<unknown>;
  /** The HTTP surface: a fetch that answers the endpoints' paths. */
  fetch(path: string, init: RequestInit): Promise<Response>;
}

export interface CampaignOptions {
  endpoint: Endpoint;
  runs: number;
  seed: number;
  /** fast-check's replay path of a failing case (printed with it). */
  path?: string | undefined;
  /** A valid body whose answer must not change; checked every `probeEvery` cases. */
  probe: { body: unknown; answer: (result: unknown) => unknown };
  probeEvery?: number;
  /** Each call's deadline: past it the case fails as a hang. */
  deadlineMs?: number;
  /** Shrink a failing case to a smallest one (default true; false stops at the first failure). */
  shrink?: boolean;
}

export interface CampaignReport {
  endpoint: Endpoint;
  runs: number;
  seed: number;
  served: number;
  refused: Record<string, number>;
  ms: number;
}

const withDeadline = <T,>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms (a hang)`)), ms);
    p.then(
      (v) => (clearTimeout(timer), resolve(v)),
      (e: unknown) => (clearTimeout(timer), reject(e)),
    );
  });

/** A served body's shape: the object kind the endpoint answers, or null when it is not one. */
function shapeOf(endpoint: Endpoint, result: unknown): string | null {
  if (result === null || typeof result !== 'object') return null;
  if (Symbol.asyncIterator in result) return 'chat.completion.stream';
  const r = result as Record<string, unknown>;
  if (endpoint === 'decisions') return r['answers'] && typeof r['answers'] === 'object' && r['usage'] ? 'decision' : null;
  if (endpoint === 'extractions') return r['object'] === 'extraction' && r['answers'] && typeof r['answers'] === 'object' && r['usage'] ? 'extraction' : null;
  if (endpoint === 'decisions_openai') return Array.isArray(r['answers']) && r['answers'].length > 0 && r['usage'] ? 'decision' : null;
  return r['object'] === 'chat.completion' && Array.isArray(r['choices']) ? 'chat.completion' : null;
}

async function drain(result: unknown): Promise<void> {
  if (result && typeof result === 'object' && Symbol.asyncIterator in result) for await (const _ of result as AsyncIterable<unknown>) void _;
}

async function viaFacade(s: Surfaces, endpoint: Endpoint, body: unknown, ms: number): Promise<Outcome> {
  try {
    const result = await withDeadline(s.facade(endpoint, body), ms, 'the facade');
    await withDeadline(drain(result), ms, 'the facade stream');
    return { served: true, shape: shapeOf(endpoint, result) };
  } catch (e) {
    const err = e as { name?: string; status?: unknown; error?: { code?: unknown; param?: unknown }; message?: unknown };
    if (err?.name !== 'JevError' || typeof err.status !== 'number') throw new Error(`the facade threw something other than a JevError: ${String(e)}`);
    return { served: false, status: err.status, code: String(err.error?.code), param: (err.error?.param as string | null) ?? null, message: String(err.message ?? '') };
  }
}

async function viaHttp(s: Surfaces, endpoint: Endpoint, text: string, ms: number): Promise<Outcome> {
  const res = await withDeadline(s.fetch(PATHS[endpoint], { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: text }), ms, 'the HTTP surface');
  const raw = await withDeadline(res.text(), ms, 'the HTTP body');
  if (res.ok) {
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) return { served: true, shape: raw.includes('"chat.completion.chunk"') ? 'chat.completion.stream' : null };
    return { served: true, shape: shapeOf(endpoint, JSON.parse(raw)) };
  }
  const body = JSON.parse(raw) as { error?: { code?: string; param?: string | null; message?: string } };
  return { served: false, status: res.status, code: String(body.error?.code), param: body.error?.param ?? null, message: String(body.error?.message ?? '') };
}

/** The top-level field a param names (`messages[3].content` → `messages`), or null. */
function topField(param: string): string | null {
  const plain = /^([A-Za-z_$][A-Za-z0-9_$-]*)/.exec(param)?.[1];
  if (plain !== undefined) return plain;
  const quoted = /^\[("(?:[^"\\]|\\.)*")\]/.exec(param)?.[1];
  return quoted === undefined ? null : (JSON.parse(quoted) as string);
}

const REQUIRED: Record<Endpoint, readonly string[]> = { decisions: ['model', 'state', 'questions'], decisions_openai: ['model', 'input', 'questions'], extractions: ['model', 'state', 'fields'], chat: ['model', 'messages'] };

/** Throws when an outcome breaks the campaign's rules. */
function judge(c: FuzzCase, body: unknown, o: Outcome, surface: string): void {
  // Described only when it fails: describing prints the case, and a deep one costs a stack overflow.
  const where = () => `${surface}, ${describeCase(c)}`;
  if (o.served) {
    if (o.shape === null) throw new Error(`${where()}: served something that is not a ${c.endpoint} answer`);
    return;
  }
  if (o.status < 400 || o.status >= 500) throw new Error(`${where()}: status ${o.status} (${o.code}: ${o.message})`);
  if (!o.message) throw new Error(`${where()}: a ${o.status} without a message`);
  if (o.param === null) return;
  const isObject = body !== null && typeof body === 'object' && !Array.isArray(body);
  const field = topField(o.param);
  if (!isObject || field === null || !(Object.hasOwn(body as object, field) || REQUIRED[c.endpoint].includes(field))) {
    throw new Error(`${where()}: param ${JSON.stringify(o.param)} names no field of the body`);
  }
}

const same = (a: Outcome, b: Outcome) =>
  a.served === b.served && (a.served || b.served || (a.status === b.status && a.code === b.code && a.param === (b as typeof a).param));

/** Runs one campaign; throws fast-check's report (seed, path, shrunk case) on the first failure. */
export async function runCampaign(s: Surfaces, o: CampaignOptions): Promise<CampaignReport> {
  const ms = o.deadlineMs ?? 60_000;
  const report: CampaignReport = { endpoint: o.endpoint, runs: o.runs, seed: o.seed, served: 0, refused: {}, ms: 0 };
  const t0 = Date.now();
  const expected = o.probe.answer(await s.facade(o.endpoint, o.probe.body));
  let n = 0;
  await fc.assert(
    fc.asyncProperty(fuzzCase(o.endpoint), async (c) => {
      const body = applyMutation(c.base, c.mutation);
      const facade = await viaFacade(s, c.endpoint, body, ms);
      judge(c, body, facade, 'facade');
      // The HTTP surface receives the same value as JSON text (where it is JSON at all).
      const text = body === undefined ? 'null' : jsonText(body);
      const http = await viaHttp(s, c.endpoint, text, ms);
      judge(c, body ?? null, http, 'http');
      if (!same(facade, http)) {
        throw new Error(`the surfaces disagree on ${describeCase(c)}: facade ${JSON.stringify(facade)}, http ${JSON.stringify(http)}`);
      }
      if (facade.served) report.served += 1;
      else report.refused[`${facade.status} ${facade.code}`] = (report.refused[`${facade.status} ${facade.code}`] ?? 0) + 1;
      if (++n % (o.probeEvery ?? 100) === 0) {
        const again = o.probe.answer(await withDeadline(s.facade(o.endpoint, o.probe.body), ms, 'the probe'));
        if (JSON.stringify(again) !== JSON.stringify(expected)) throw new Error(`after ${n} cases the probe's answer changed: ${JSON.stringify(again)} vs ${JSON.stringify(expected)}`);
      }
    }),
    { numRuns: o.runs, seed: o.seed, ...(o.path ? { path: o.path } : {}), endOnFailure: o.shrink === false },
  );
  report.ms = Date.now() - t0;
  return report;
}
