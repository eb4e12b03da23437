// Reliability in Chromium, part 1: bad input through the real service worker and the worker
// facade; 50 concurrent mixed requests from several callers. The generators are the Node
// tests' (test/reliability/malformed.ts, workload.ts), bundled into the page.
import { expect, test, type Page } from './support/warm-context.ts';
import { openApp, unhandledIn } from './reliability-support.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

const SEED = 20261202;
const CASES = 320;
const BATCH = 40;

type Seen = {
  index: number;
  fault: string;
  expected: { status: number; code: string; param: string | null };
  status: number;
  contentType: string | null;
  error: { code: string; param: string | null; message: string; type: string } | null;
  facade: { status?: number; code?: string; param?: string | null; name?: string; served?: boolean } | null;
};

/** A decision and a chat, through the facade and through the service worker. */
function probes(page: Page) {
  return page.evaluate(async () => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const post = (path: string, body: unknown) => fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json());
    const d = await jev.decisions.create(R.PROBE_DECISION);
    const c = await jev.chat.completions.create(R.PROBE_CHAT);
    const hd = await post(R.PATHS.decisions, R.PROBE_DECISION);
    const hc = await post(R.PATHS.chat, R.PROBE_CHAT);
    return { facade: [d.answers, c.choices[0].message.content], http: [hd.answers, hc.choices[0].message.content] };
  });
}

test('bad input: 320 generated malformed requests through the service worker, and the same bodies through the worker facade', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = await openApp(page);
  const before = await probes(page);
  expect(before.http).toEqual(before.facade);

  const seen: Seen[] = [];
  for (let from = 0; from < CASES; from += BATCH) {
    const batch = (await page.evaluate(
      async ({ seed, count, from, to }) => {
        const R = (window as any).jevReliability;
        const jev = (window as any).jev;
        const out: unknown[] = [];
        for (const c of R.malformedCases(seed, count)) {
          if (c.index < from || c.index >= to) continue;
          const res = await fetch(R.PATHS[c.endpoint], { method: 'POST', headers: { 'Content-Type': c.contentType }, body: c.text });
          const body = await res.json().catch(() => null);
          // The facade takes the body the wire carries, where it is JSON at all.
          let facade: unknown = null;
          let parsed: unknown;
          let json = typeof c.text === 'string' && c.contentType === 'application/json';
          try {
            if (json) parsed = JSON.parse(c.text);
          } catch {
            json = false;
          }
          if (json) {
            try {
              await (c.endpoint === 'decisions' ? jev.decisions.create(parsed) : jev.chat.completions.create(parsed));
              facade = { served: true };
            } catch (e: any) {
              facade = { status: e.status, code: e.error?.code, param: e.error?.param, name: e.name };
            }
          }
          out.push({ index: c.index, fault: c.fault, expected: c.http, status: res.status, contentType: res.headers.get('content-type'), error: body?.error ?? null, facade });
        }
        return out;
      },
      { seed: SEED, count: CASES, from, to: from + BATCH },
    )) as Seen[];
    seen.push(...batch);
  }

  expect(seen).toHaveLength(CASES);
  let facadeChecked = 0;
  for (const s of seen) {
    const label = `case #${s.index} ${s.fault}: ${s.error?.message?.slice(0, 160)}`;
    expect({ status: s.status, code: s.error?.code, param: s.error?.param }, label).toEqual(s.expected);
    expect(s.contentType, label).toMatch(/^application\/json/);
    expect(s.error?.type, label).toBe('invalid_request_error');
    if (s.expected.param !== null) expect(s.error?.message, label).toContain(s.expected.param);
    if (s.facade) {
      expect({ status: s.facade.status, code: s.facade.code, param: s.facade.param, name: s.facade.name }, `${label} (facade)`).toEqual({ ...s.expected, name: 'JevError' });
      facadeChecked++;
    }
  }
  expect(facadeChecked).toBeGreaterThan(250);
  expect(new Set(seen.map((s) => s.fault)).size).toBeGreaterThan(40);

  // The same answers after the storm, and nothing unhandled.
  expect(await probes(page)).toEqual(before);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
  expect(await page.evaluate(() => ({} as any).polluted)).toBeUndefined();
});

test('load: 50 concurrent mixed requests from 5 callers, facade and service worker: each answer equals the request served alone', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = await openApp(page);
  const out = await page.evaluate(async () => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const surface = { decisions: jev.decisions, chat: jev.chat, fetch: fetch.bind(window) };
    const jobs = R.mixedJobs(4242, 50);
    const alone = [];
    for (const job of jobs) alone.push(await R.serve(surface, job, location.origin));
    const results: unknown[] = new Array(jobs.length);
    let inFlight = 0;
    let peak = 0;
    const callers = [0, 1, 2, 3, 4].map((c) =>
      Promise.all(
        jobs.map(async (job: unknown, i: number) => {
          if (i % 5 !== c) return;
          inFlight++;
          peak = Math.max(peak, inFlight);
          results[i] = await R.serve(surface, job, location.origin);
          inFlight--;
        }),
      ),
    );
    await Promise.all(callers);
    const status = await jev.status();
    return {
      alone,
      results,
      peak,
      kinds: jobs.map((j: any) => `${j.kind}/${j.via}${j.stream ? '/stream' : ''}`),
      live: status.counters.liveTensors,
      cached: status.prefixCache.entries,
      state: status.state,
    };
  });
  expect(out.peak).toBe(50);
  expect(new Set(out.kinds)).toEqual(new Set(['decision/facade', 'decision/http', 'chat/facade', 'chat/facade/stream', 'chat/http', 'chat/http/stream']));
  // Within 1e-6: which earlier prompts the prefix cache holds depends on the order they ran in.
  for (let i = 0; i < 50; i++) expect(outcomeDiff(out.results[i], out.alone[i]), `job ${i} (${out.kinds[i]})`).toEqual([]);
  expect(out.state).toBe('ready');
  expect(out.live).toBe(out.cached * 4); // the prefix cache's: the tiny model's 2 layers × key and value a prompt
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});

/**
 * Held-out bodies, written by hand rather than generated: the shapes a fuzzer's arbitraries do not
 * draw (a million levels of text, BOM, overlong UTF-8, duplicate keys; through the facade a getter
 * that throws, a proxy, a revoked proxy, a Map, a 2^32 − 1 sparse array). Each gets the status,
 * code and param written beside it, and the engine answers its probes as before after all of them.
 */
test('held-out bad bodies, by hand, through the service worker and the facade: each its own 4xx and param, the engine unchanged', async ({ page }) => {
  test.setTimeout(300_000);
  const errors = await openApp(page);
  const before = await probes(page);
  const seen = await page.evaluate(async () => {
    const jev = (window as any).jev;
    const D = '/inference/jev/api/alpha/decisions';
    const C = '/v1/chat/completions';
    const q = '"questions":{"q":{"type":"noul","instructions":"Is it?"}}';
    const valid = `{"model":"jev","state":"The sky is blue.",${q}}`;
    const out: Record<string, { status: number; code?: string; param?: string | null; message?: string }> = {};
    const http = async (label: string, path: string, body: BodyInit, type = 'application/json') => {
      const r = await fetch(path, { method: 'POST', headers: { 'Content-Type': type }, body });
      const j = await r.json().catch(() => null);
      out[label] = r.ok ? { status: r.status } : { status: r.status, code: j?.error?.code, param: j?.error?.param ?? null, message: j?.error?.message };
    };
    const facade = async (label: string, body: unknown, chat = false) => {
      try {
        await (chat ? jev.chat.completions.create(body) : jev.decisions.create(body));
        out[label] = { status: 200 };
      } catch (e: any) {
        out[label] = { status: e.status, code: e.code ?? e.error?.code, param: e.param ?? e.error?.param ?? null, message: e.message };
      }
    };
    const deep = (n: number, open: string, close: string) => open.repeat(n) + '1' + close.repeat(n);
    await http('a million levels of arrays in state', D, `{"model":"jev","state":${deep(1_000_000, '[', ']')},${q}}`);
    await http('5,000 levels of objects in state', D, `{"model":"jev","state":${deep(5_000, '{"a":', '}')},${q}}`);
    await http('chat content parts 100,000 levels deep', C, `{"model":"jev","messages":[{"role":"user","content":[{"type":"text","text":${deep(100_000, '[', ']')}}]}]}`);
    await http('a BOM before the body', D, `\ufeff${valid}`);
    const bytes = new TextEncoder().encode(valid);
    const at = valid.indexOf('The sky');
    await http('overlong UTF-8 (C0 AF) in state', D, new Uint8Array([...bytes.slice(0, at), 0xc0, 0xaf, ...bytes.slice(at)]));
    await http('a lone surrogate escaped in state', D, valid.replace('The sky', 'a\\ud800b'));
    await http('NUL escaped in state', D, valid.replace('The sky', 'a\\u0000b'));
    await http('a duplicate key', D, valid.replace('"state":', '"state":"x","state":'));
    await http('text after the JSON', D, `${valid} trailing`);
    await http('max_tokens 1e999', C, '{"model":"jev","messages":[{"role":"user","content":"hi"}],"max_tokens":1e999}');
    await http('max_tokens -0', C, '{"model":"jev","messages":[{"role":"user","content":"hi"}],"max_tokens":-0}');
    await http('__proto__ as a question key', D, `{"model":"jev","state":"x","questions":{"__proto__":{"type":"noul","instructions":"x"}}}`);
    await http('text/plain', D, valid, 'text/plain');
    await http('an empty body', D, '');
    await http('a 30 MB state', D, `{"model":"jev","state":"${'x'.repeat(30_000_000)}",${q}}`);
    await http('200,000 questions', D, JSON.stringify({ model: 'jev', state: 'x', questions: Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, { type: 'noul', instructions: 'q' }])) }));
    const body = JSON.parse(valid);
    await facade('a getter that throws', Object.defineProperty({ model: 'jev', questions: body.questions }, 'state', { enumerable: true, get: () => { throw new Error('boom'); } }));
    await facade('a proxy whose keys throw', new Proxy({}, { ownKeys: () => { throw new Error('boom'); } }));
    const revocable = Proxy.revocable({}, {});
    revocable.revoke();
    await facade('a revoked proxy as metadata', { ...body, metadata: revocable.proxy });
    await facade('a Map as state', { ...body, state: new Map([['a', 1]]) });
    await facade('a 2^32 − 1 sparse array as state', { ...body, state: new Array(2 ** 32 - 1) });
    await facade('a bigint bound', { ...body, questions: { q: { type: 'score', instructions: 'x', min: 1n } } });
    let v: unknown = 'leaf';
    for (let i = 0; i < 1_000_000; i++) v = [v];
    await facade('a million levels in a chat content part', { model: 'jev', messages: [{ role: 'user', content: [{ type: 'text', text: v }] }] }, true);
    return out;
  });
  const expected: Record<string, [number, string | null, string | null] | 200> = {
    'a million levels of arrays in state': [400, 'invalid_request', 'state'],
    '5,000 levels of objects in state': [400, 'invalid_request', 'state'],
    'chat content parts 100,000 levels deep': [400, 'invalid_request', 'messages[0].content'],
    // A BOM, escaped surrogates and NULs, and a repeated key (the last wins, as JSON.parse reads it) are valid JSON text.
    'a BOM before the body': 200,
    'overlong UTF-8 (C0 AF) in state': [400, 'invalid_json', null],
    'a lone surrogate escaped in state': 200,
    'NUL escaped in state': 200,
    'a duplicate key': 200,
    'text after the JSON': [400, 'invalid_json', null],
    'max_tokens 1e999': [400, 'invalid_request', 'max_tokens'],
    'max_tokens -0': [400, 'invalid_request', 'max_tokens'],
    '__proto__ as a question key': [400, 'invalid_request', 'questions.__proto__'],
    'text/plain': [415, 'unsupported_media_type', null],
    'an empty body': [400, 'invalid_json', null],
    'a 30 MB state': [400, 'invalid_request', 'state'],
    '200,000 questions': [400, 'invalid_request', 'questions'],
    'a getter that throws': [400, 'invalid_request', 'state'],
    'a proxy whose keys throw': [400, 'invalid_request', null],
    'a revoked proxy as metadata': [400, 'invalid_request', 'metadata'],
    'a Map as state': [400, 'invalid_request', 'state'],
    'a 2^32 − 1 sparse array as state': [400, 'invalid_request', 'state'],
    'a bigint bound': [400, 'invalid_request', 'questions.q.min'],
    'a million levels in a chat content part': [400, 'invalid_request', 'messages[0].content'],
  };
  expect(Object.keys(seen)).toEqual(Object.keys(expected));
  for (const [label, want] of Object.entries(expected)) {
    const got = seen[label]!;
    if (want === 200) expect(got, label).toEqual({ status: 200 });
    else {
      expect({ status: got.status, code: got.code, param: got.param }, label).toEqual({ status: want[0], code: want[1], param: want[2] });
      expect(got.message, label).toBeTruthy();
      if (want[2] !== null) expect(got.message, label).toContain(want[2]);
    }
  }
  expect(await probes(page)).toEqual(before);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});
