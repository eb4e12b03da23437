/**
 * The soak's request stream, one request at a time, run in the page (bundled into the reliability
 * harness as `jevReliability.soak`): step `i` is a pure function of the seed and `i`, so a run is
 * reproducible and the Playwright spec and `npm run soak` send the same stream.
 *
 * The mix: decisions of 1–16 questions, plain and streamed chats, streams cancelled after their
 * second chunk, bad bodies (the reliability suite's malformed cases, each with its expected
 * 4xx), through the worker facade and the HTTP surface (the service worker). States and prompts
 * come from small pools (prefix-cache hits) or begin with words no earlier one began with (misses). Every `reloadEvery`
 * requests the model is loaded again, the first time at request 50. After each step, the engine's status as the sampler needs it.
 */
import { malformedCases, PATHS, rng, type MalformedCase } from '../../test/reliability/malformed.ts';

export type StepKind = 'decision' | 'chat' | 'stream' | 'cancel' | 'bad' | 'reload';

/** What one step did and what the engine held after it. */
export interface StepResult {
  i: number;
  kind: StepKind;
  via: 'facade' | 'http';
  /** A problem: a valid request not answered, a bad one not refused as expected. */
  wrong: string | null;
  live: number;
  cacheEntries: number;
  cacheBytes: number;
  hits: number;
  misses: number;
  wasmHeap: number | null;
}

export interface SoakPage {
  jev: any;
  fetch: typeof fetch;
  /** What `jev.load` reloads every `reloadEvery` steps. */
  load: { model: string; host: string; device: string; dtype: string };
  reloadEvery: number;
  seed: number;
}

const STATES = [
  'My invoice was charged twice and I want a refund today.',
  'The app crashes whenever I open the settings page on my phone.',
  'Where is my parcel? It was due last Tuesday and tracking shows nothing.',
];
const PROMPTS = ['Tell me a story about a fox.', 'Say something kind.', 'List three colours.'];
const TYPES = ['noul', 'choice', 'score'] as const;
const WORDS = 'amber birch cedar delta ember fjord grove heron iris juniper kelp lotus maple nectar olive pearl quartz raven sage tulip'.split(' ');

function questions(n: number, next: () => number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let q = 0; q < n; q++) {
    const type = TYPES[Math.floor(next() * TYPES.length)]!;
    if (type === 'noul') out[`q${q}`] = { type, instructions: `Is point ${q} true?` };
    else if (type === 'choice') out[`q${q}`] = { type, instructions: `Which team, ${q}?`, criteria: { billing: 'Money', tech: 'Bugs', sales: null } };
    else out[`q${q}`] = { type, instructions: `How happy, ${q}?`, criteria: ['upset', 'neutral', 'happy'] };
  }
  return out;
}

/** The first reload falls in the warm-up (request 50), so that its code paths are warm before memory is levelled. */
const FIRST_RELOAD = 50;

/** Which kind step `i` is: mostly valid work, 10 % cancels, 15 % bad bodies, a reload every `reloadEvery` (from request 50). */
export function kindOf(i: number, seed: number, reloadEvery: number): StepKind {
  if (reloadEvery > 0 && i >= FIRST_RELOAD && (i - FIRST_RELOAD) % reloadEvery === 0) return 'reload';
  const x = rng(seed * 7919 + i)();
  return x < 0.35 ? 'decision' : x < 0.55 ? 'chat' : x < 0.75 ? 'stream' : x < 0.85 ? 'cancel' : 'bad';
}

const post = (f: typeof fetch, path: string, body: unknown) => f(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function readSse(res: Response, stopAfter = Infinity): Promise<{ chunks: number; error: unknown }> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let chunks = 0;
  let error: unknown = null;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks += value.match(/data: \{"id"/g)?.length ?? 0;
    if (value.includes('"error"')) error = value;
    if (chunks >= stopAfter) {
      await reader.cancel();
      break;
    }
  }
  return { chunks, error };
}

/** Runs step `i`; returns what it did and the engine's counters after it. */
export async function soakStep(p: SoakPage, i: number): Promise<StepResult> {
  const next = rng(p.seed * 104729 + i);
  const kind = kindOf(i, p.seed, p.reloadEvery);
  const via = next() < 0.4 ? 'http' : 'facade';
  const hit = next() < 0.6; // from the pools: the prefix cache may hold it
  // A prompt no earlier one begins with, from a bounded vocabulary: a fresh number per request would
  // fill the tokenizer's own word cache (an LRU of 10,000 words in @huggingface/tokenizers' BPE)
  // and be read as growth of the engine.
  const unique = `(${WORDS[i % WORDS.length]} ${WORDS[Math.floor(i / WORDS.length) % WORDS.length]} ${WORDS[Math.floor(i / WORDS.length ** 2) % WORDS.length]})`;
  let wrong: string | null = null;
  const fail = (what: string) => (e: unknown) => {
    wrong = `${what}: ${String((e as Error)?.message ?? e)}`;
  };
  if (kind === 'reload') {
    await p.jev.load(p.load).catch(fail('reload'));
  } else if (kind === 'decision') {
    const state = hit ? STATES[i % STATES.length]! : `${unique} ${STATES[i % STATES.length]}`;
    const body = { model: 'jev', state, questions: questions(1 + Math.floor(next() * 16), next) };
    if (via === 'facade') await p.jev.decisions.create(body).catch(fail('decision'));
    else {
      const res = await post(p.fetch, PATHS.decisions, body);
      if (res.status !== 200) wrong = `decision over HTTP: ${res.status} ${await res.text()}`;
      else await res.json();
    }
  } else if (kind === 'chat' || kind === 'stream' || kind === 'cancel') {
    const content = hit ? PROMPTS[i % PROMPTS.length]! : `${unique} ${PROMPTS[i % PROMPTS.length]}`;
    const stream = kind !== 'chat';
    const body = { model: 'jev', messages: [{ role: 'user', content }], max_tokens: kind === 'cancel' ? 64 : 4 + Math.floor(next() * 12), stop: [], temperature: 0, stream };
    const stopAfter = kind === 'cancel' ? 2 : Infinity;
    if (via === 'facade') {
      const c = new AbortController();
      try {
        const res = await p.jev.chat.completions.create(body, { signal: c.signal });
        if (stream) {
          let n = 0;
          for await (const _ of res) if (++n >= stopAfter) c.abort();
        }
      } catch (e) {
        if (!(kind === 'cancel' && (e as Error)?.name === 'AbortError')) fail(kind)(e);
      }
    } else {
      const res = await post(p.fetch, PATHS.chat, body);
      if (res.status !== 200) wrong = `${kind} over HTTP: ${res.status} ${await res.text()}`;
      else if (stream) {
        const out = await readSse(res, stopAfter);
        if (out.error) wrong = `${kind} over HTTP: ${String(out.error)}`;
      } else await res.json();
    }
    // The engine stops a cancelled request at its next token; a small decision behind it in the
    // queue ends once it has, so what is read next is the engine between requests.
    if (kind === 'cancel') await p.jev.decisions.create({ model: 'jev', state: 'fence', questions: { q: { type: 'noul' } } }).catch(fail('after a cancel'));
  } else {
    const c = malformedCases(p.seed + i, 1).next().value as MalformedCase;
    if (via === 'facade' && c.body !== undefined && c.facade) {
      const create = (b: unknown) => (c.endpoint === 'decisions' ? p.jev.decisions.create(b) : p.jev.chat.completions.create(b));
      await create(c.body).then(
        () => (wrong = `bad body (${c.fault}) answered by the facade`),
        (e: any) => {
          if (e?.status !== c.facade!.status || e?.error?.code !== c.facade!.code) wrong = `bad body (${c.fault}): ${e?.status} ${e?.error?.code}, not ${c.facade!.status} ${c.facade!.code}`;
        },
      );
    } else {
      const res = await p.fetch(PATHS[c.endpoint], { method: 'POST', headers: { 'Content-Type': c.contentType }, body: c.text });
      await res.arrayBuffer();
      if (res.status !== c.http.status) wrong = `bad body (${c.fault}) over HTTP: ${res.status}, not ${c.http.status}`;
    }
  }
  const s = await p.jev.status();
  return {
    i,
    kind,
    via,
    wrong,
    live: s.counters.liveTensors,
    cacheEntries: s.prefixCache.entries,
    cacheBytes: s.prefixCache.bytes,
    hits: s.prefixCache.hits,
    misses: s.prefixCache.misses,
    wasmHeap: s.counters.wasmHeapBytes ?? null,
  };
}

/** Steps `from` to `to` (exclusive) in order. */
export async function soakSteps(p: SoakPage, from: number, to: number): Promise<StepResult[]> {
  const out: StepResult[] = [];
  for (let i = from; i < to; i++) out.push(await soakStep(p, i));
  return out;
}
