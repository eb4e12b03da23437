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
