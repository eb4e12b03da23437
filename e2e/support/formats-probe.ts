/**
 * The harness of e2e/formats.spec.ts: what one format is asked in the page (a decision, a greedy
 * chat with log-probs, a second turn, a cancelled stream), and how its answers are compared with
 * the fp32 reference of the same weights, measured in the same page.
 *
 * `probeFormat` runs in the page (Playwright serialises it: it may use only its argument and the
 * page's globals). The comparisons run in Node on what it returns.
 */
import type { Page } from '@playwright/test';
import { TICKET_DECISION } from './ticket-decision.ts';

export type Dtype = 'fp32' | 'fp16' | 'q8' | 'q4' | 'q4f16';

/** The ticket decision, uncalibrated, with each answer's label mass: the state is shared by the questions. */
export const DECISION = { ...TICKET_DECISION, calibrate: false, include: ['answer_mass'] } as const;

/** The greedy chat whose first tokens are compared. */
export const CHAT = {
  model: 'jev',
  messages: [
    { role: 'system', content: 'You answer in one short sentence.' },
    { role: 'user', content: 'Say something about the sea.' },
  ],
  temperature: 0,
  max_tokens: 10,
  stop: [],
  logprobs: true,
  top_logprobs: 5,
} as const;

export const SECOND_TURN = 'And about the sky?';

/** A long sampled generation, held open (client.debug.hold) and cancelled mid-stream. */
export const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 300, stop: [], temperature: 0.8, seed: 11 } as const;

/** Passes the held stream may run before the gate closes. */
export const HOLD_AFTER = 4;

export interface LoadRefusal {
  code: string | undefined;
  status: number | undefined;
  param: string | null | undefined;
  message: string;
  details: Record<string, any> | null;
}

export interface FormatRun {
  refused: LoadRefusal | null;
  status: any;
  decision: any;
  decisionFed: number;
  chat: any;
  second: any;
  secondFed: number;
  /** A one-token turn, then a turn that extends it exactly (the cache holds the first prompt). */
  short: any;
  extended: any;
  extendedFed: number;
  cancel: { outcome: string; chunks: number; passes: number; fencePasses: number };
  after: any;
  afterStatus: any;
  loadMs: number;
}

export interface ProbeArgs {
  load: { model: string; dtype: Dtype };
  decision: typeof DECISION;
  chat: typeof CHAT;
  secondTurn: string;
  long: typeof LONG;
  holdAfter: number;
}

/** In the page: loads one format through `window.jev.load` and asks it everything. */
export async function probeFormat(args: ProbeArgs): Promise<FormatRun> {
  const jev = (window as any).jev;
  const counters = async () => (await jev.status()).counters as { tokensFed: number; forwardPasses: number; liveTensors: number };
  const t0 = performance.now();
  try {
    await jev.load(args.load);
  } catch (e: any) {
    return {
      refused: { code: e.code ?? e.error?.code, status: e.status, param: e.param ?? e.error?.param, message: String(e.message), details: e.details ?? null },
      status: await jev.status(),
    } as FormatRun;
  }
  const loadMs = performance.now() - t0;
  const status = await jev.status();

  let c = await counters();
  const decision = await jev.decisions.create(args.decision);
  const decisionFed = (await counters()).tokensFed - c.tokensFed;

  const chat = await jev.chat.completions.create(args.chat);
  const history = [...args.chat.messages, { role: 'assistant', content: chat.choices[0].message.content }, { role: 'user', content: args.secondTurn }];
  c = await counters();
  const second = await jev.chat.completions.create({ ...args.chat, messages: history, max_tokens: 4, logprobs: false, top_logprobs: 0 });
  const secondFed = (await counters()).tokensFed - c.tokensFed;

  // A turn of one token leaves the cache holding exactly its prompt (the token is never fed),
  // so the next turn extends it: only its new tokens are fed, on any device. (From an empty
  // prefix cache: the earlier turns' caches would otherwise also hold the start of its reply.)
  await jev.cache.clear();
  const plain = { ...args.chat, logprobs: false, top_logprobs: 0 };
  const short = await jev.chat.completions.create({ ...plain, max_tokens: 1 });
  const shortHistory = [...args.chat.messages, { role: 'assistant', content: short.choices[0].message.content }, { role: 'user', content: args.secondTurn }];
  c = await counters();
  const extended = await jev.chat.completions.create({ ...plain, messages: shortHistory, max_tokens: 4 });
  const extendedFed = (await counters()).tokensFed - c.tokensFed;

  // A stream held after `holdAfter` passes, so it is still running when it is cancelled.
  const fence = () => jev.decisions.create({ model: 'jev', state: 'fence', questions: { q: { type: 'noul', instructions: 'ok?' } } });
  c = await counters();
  await fence();
  const fencePasses = (await counters()).forwardPasses - c.forwardPasses;
  await jev.debug.hold(args.holdAfter);
  c = await counters();
  const abort = new AbortController();
  let chunks = 0;
  const outcome = await (async () => {
    const stream = await jev.chat.completions.create({ ...args.long, stream: true }, { signal: abort.signal });
    for await (const _ of stream) if (++chunks === 3) abort.abort();
    return 'completed';
  })().catch((e: any) => String(e?.name ?? e));
  await fence();
  const passes = (await counters()).forwardPasses - c.forwardPasses - fencePasses;

  const after = await jev.decisions.create(args.decision);
  return {
    refused: null,
    status,
    decision,
    decisionFed,
    chat,
    second,
    secondFed,
    short,
    extended,
    extendedFed,
    cancel: { outcome, chunks, passes, fencePasses },
    after,
    afterStatus: await jev.status(),
    loadMs,
  };
}

export function probe(page: Page, load: { model: string; dtype: Dtype }): Promise<FormatRun> {
  return page.evaluate(probeFormat, { load, decision: DECISION, chat: CHAT, secondTurn: SECOND_TURN, long: LONG, holdAfter: HOLD_AFTER });
}

/** Every probability an answer map holds (noul, each choice's and grade's), keyed by question and answer. */
export function answerProbabilities(answers: Record<string, any>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [q, a] of Object.entries(answers)) {
    if (a.type === 'noul') out.set(`${q}.noul`, a.noul);
    for (const [k, p] of Object.entries<number>(a.probabilities ?? {})) out.set(`${q}.${k}`, p);
  }
  return out;
}

/** max |p − p_ref| over every answer probability of the decision. */
export function maxProbabilityDeviation(answers: Record<string, any>, reference: Record<string, any>): number {
  const a = answerProbabilities(answers);
  const r = answerProbabilities(reference);
  if (a.size !== r.size || a.size === 0) throw new Error(`answers differ in shape: ${[...a.keys()]} vs ${[...r.keys()]}`);
  let max = 0;
  for (const [k, p] of r) {
    const q = a.get(k);
    if (q === undefined) throw new Error(`answer ${k} missing`);
    max = Math.max(max, Math.abs(q - p));
  }
  return max;
}

/** max |log mass − log mass_ref| over the questions: the drift of the labels' summed next-token probability. */
export function maxMassLogDrift(answers: Record<string, any>, reference: Record<string, any>): number {
  let max = 0;
  for (const [q, r] of Object.entries<any>(reference)) {
    const a = answers[q];
    if (typeof a?.answer_mass !== 'number' || typeof r.answer_mass !== 'number') throw new Error(`answer_mass of ${q} missing`);
    max = Math.max(max, Math.abs(Math.log(a.answer_mass) - Math.log(r.answer_mass)));
  }
  return max;
}

export interface GreedyComparison {
  /** Tokens equal to the reference's, from the first. */
  agree: number;
  compared: number;
  /** max |logprob − logprob_ref| of the chosen token over the agreeing steps. */
  drift: number;
  /**
   * Where the paths part: how far below the reference's top token the reference put this format's
   * token (0 when they agree throughout; Infinity when it was not among the reference's top log-probs).
   */
  gapAtSplit: number;
}

/** Greedy tokens of a format against the reference's, with the log-prob drift while they agree. */
export function compareGreedy(chat: any, reference: any): GreedyComparison {
  const mine: any[] = chat.choices[0].logprobs?.content ?? [];
  const ref: any[] = reference.choices[0].logprobs?.content ?? [];
  if (mine.length === 0 || ref.length === 0) throw new Error('the chat carries no logprobs');
  const compared = Math.min(mine.length, ref.length);
  let agree = 0;
  let drift = 0;
  while (agree < compared && mine[agree].token === ref[agree].token) {
    drift = Math.max(drift, Math.abs(mine[agree].logprob - ref[agree].logprob));
    agree++;
  }
  let gapAtSplit = 0;
  if (agree < compared) {
    const alt = (ref[agree].top_logprobs as any[]).find((t) => t.token === mine[agree].token);
    gapAtSplit = alt ? ref[agree].logprob - alt.logprob : Infinity;
  }
  return { agree, compared, drift, gapAtSplit };
}
