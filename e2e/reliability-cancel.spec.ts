// Reliability in Chromium, part 3: cancellation (in-flight and queued requests aborted through
// the facade, streams closed half-way, the page that hosts the engine closed) and memory (300
// sequential mixed requests: live tensors back to baseline after each, worker heap bounded).
import { expect, test, type Page } from './support/warm-context.ts';
import { engineWorkerHeap, openApp, openNonHostingPage, unhandledIn } from './reliability-support.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 300, stop: [], temperature: 0.8, seed: 11 };
/** Live tensors between requests once a chat was served: the tiny model's conversation cache, 2 layers × key and value. */
/** Live tensors per cached prompt: the tiny model's 2 layers × key and value. */
const PER_PROMPT = 4;

test('aborting through the facade: queued requests never run, a request in flight stops, the engine stays healthy', async ({ page }) => {
  const errors = await openApp(page);
  const out = await page.evaluate(async (LONG) => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const passes = async () => (await jev.status()).counters.forwardPasses as number;
    const probe = async () => [(await jev.decisions.create(R.PROBE_DECISION)).answers, (await jev.chat.completions.create(R.PROBE_CHAT)).choices[0].message.content];
    const before = await probe();

    // The long chat alone: its forward passes and its text.
    let p0 = await passes();
    const alone = (await jev.chat.completions.create(LONG)).choices[0].message.content;
    const longPasses = (await passes()) - p0;

    // The same chat with 12 requests queued behind it, all aborted while queued.
    p0 = await passes();
    const settled: string[] = [];
    const long = jev.chat.completions.create(LONG).then((r: any) => (settled.push('long'), r.choices[0].message.content));
    const queued = Array.from({ length: 12 }, (_, i) => {
      const c = new AbortController();
      const body =
        i % 3 === 0
          ? { ...R.PROBE_DECISION, state: `queued ${i}` }
          : { ...R.PROBE_CHAT, messages: [{ role: 'user', content: `queued ${i}` }], stream: i % 3 === 2 };
      const call = i % 3 === 0 ? jev.decisions.create(body, { signal: c.signal }) : jev.chat.completions.create(body, { signal: c.signal });
      return { c, result: call.then(() => 'served', (e: any) => (settled.push('aborted'), e.name)) };
    });
    for (const q of queued) q.c.abort();
    const names = await Promise.all(queued.map((q) => q.result));
    const text = await long;
    const withQueuedPasses = (await passes()) - p0;

    // A streamed chat aborted in flight.
    const c = new AbortController();
    const stream = await jev.chat.completions.create({ ...LONG, stream: true }, { signal: c.signal });
    let chunks = 0;
    const inFlight = await (async () => {
      for await (const _ of stream) if (++chunks === 3) c.abort();
      return 'completed';
    })().catch((e: any) => e.name);

    const after = await probe();
    const status = await jev.status();
    return { before, after, alone, text, longPasses, withQueuedPasses, names, settled, inFlight, live: status.counters.liveTensors, cached: status.prefixCache.entries, state: status.state };
  }, LONG);
  expect(out.names).toEqual(Array(12).fill('AbortError'));
  // Every queued request was refused before the long chat ended, and none of them ran: the
  // engine did exactly the long chat's forward passes, and wrote the same text.
  expect(out.settled).toEqual([...Array(12).fill('aborted'), 'long']);
  expect(out.withQueuedPasses).toBe(out.longPasses);
  expect(out.text).toBe(out.alone);
  expect(out.inFlight).toBe('AbortError');
  expect(outcomeDiff(out.after, out.before)).toEqual([]); // within 1e-6: the second time from the prefix cache
  expect(out.state).toBe('ready');
  expect(out.live).toBe(out.cached * PER_PROMPT);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});

test('closing streams half-way (facade iterator, service worker response body) stops generation', async ({ page }) => {
  const errors = await openApp(page);
  const out = await page.evaluate(async (LONG) => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const passes = async () => (await jev.status()).counters.forwardPasses as number;
    const fence = () => jev.decisions.create({ model: 'jev', state: 'fence', questions: { q: { type: 'noul' } } });
    let p0 = await passes();
    await fence();
    const fencePasses = (await passes()) - p0;

    p0 = await passes();
    let facadeChunks = 0;
    for await (const _ of await jev.chat.completions.create({ ...LONG, stream: true })) if (++facadeChunks === 3) break;
    await fence();
    const facadePasses = (await passes()) - p0 - fencePasses;

    // The engine holds the generation after 5 passes (jev.debug.hold), so the stream is still
    // running when the reader cancels it, however fast the machine; the cancel ends the hold.
    await jev.debug.hold(5);
    p0 = await passes();
    const res = await fetch(R.PATHS.chat, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ ...LONG, stream: true }) });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    await fence();
    const httpPasses = (await passes()) - p0 - fencePasses;
    const status = await jev.status();
    return { facadeChunks, facadePasses, httpPasses, live: status.counters.liveTensors, cached: status.prefixCache.entries };
  }, LONG);
  // A generation left running would have made ~300 passes. Through the facade each chunk is
  // awaited, so it stops within a few tokens; through the service worker the stream was held at
  // its 6th pass, and the cancel ended it there at the latest (the held pass never ran).
  expect(out.facadePasses).toBeLessThanOrEqual(out.facadeChunks + 3);
  expect(out.httpPasses).toBeGreaterThan(0);
  expect(out.httpPasses).toBeLessThanOrEqual(5);
  expect(out.live).toBe(out.cached * PER_PROMPT);
  expect(errors).toEqual([]);
});

/** A request from the non-hosting page, through the service worker. */
function ask(page: Page) {
  return page.evaluate(async () => {
    const R = (window as any).jevReliability ?? { PATHS: { decisions: '/inference/jev/api/alpha/decisions' } };
    const body = {
      model: 'jev',
      state: 'My invoice was charged twice and I want a refund today.',
      questions: { urgent: { type: 'noul', instructions: 'Is it urgent?' }, mood: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'angry'] } },
    };
    const r = await fetch(R.PATHS.decisions, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    return { status: r.status, body: await r.json() };
  });
}

test('closing the page that hosts the engine: a stream it was serving ends with engine_unavailable, a second page keeps working, no page gives 503, a new page serves again', async ({ context }) => {
  test.setTimeout(600_000);
  const hostA = await context.newPage();
  await openApp(hostA);
  const asker = await context.newPage();
  const askerErrors: string[] = [];
  asker.on('pageerror', (e) => askerErrors.push(e.message));
  await openNonHostingPage(asker);

  const first = await ask(asker);
  expect(first.status).toBe(200);

  // A stream from the non-hosting page, served by A, which holds it after 4 passes
  // (jev.debug.hold): it is still running when A closes, by construction.
  await hostA.evaluate(() => (window as any).jev.debug.hold(4));
  await asker.evaluate(() => {
    const w = window as any;
    w.__chunks = 0;
    w.__stream = (async () => {
      const r = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'jev', messages: [{ role: 'user', content: 'Go on and on.' }], max_tokens: 900, stop: [], stream: true, temperature: 0.8, seed: 5 }),
      });
      const reader = r.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { status: r.status, last: text.trim().split('\n\n').at(-1) };
        text += value;
        w.__chunks += value.match(/data: \{"id"/g)?.length ?? 0; // chunks, not reads (one read may carry several)
      }
    })();
  });
  await asker.waitForFunction(() => (window as any).__chunks > 2);

  // A second page opens; then A closes while its stream is half-way.
  const hostB = await context.newPage();
  const errorsB = await openApp(hostB);
  await hostA.close();
  const ended = await asker.evaluate(() => (window as any).__stream);
  expect(ended.status).toBe(200);
  expect(JSON.parse(ended.last.replace(/^data: /, '')).error).toMatchObject({ code: 'engine_unavailable', type: 'server_error' });

  // B keeps working, for itself and for the non-hosting page, with the same answers.
  const viaB = await ask(asker);
  expect(viaB).toEqual({ status: 200, body: expect.objectContaining({ answers: first.body.answers }) });
  expect((await ask(hostB)).body.answers).toEqual(first.body.answers);

  // No page hosts the engine: the service worker answers 503 engine_unavailable.
  await hostB.close();
  const none = await ask(asker);
  expect(none.status).toBe(503);
  expect(none.body.error).toMatchObject({ code: 'engine_unavailable', type: 'server_error', param: null });

  // A page that hosts the engine opens: served again.
  const hostC = await context.newPage();
  const errorsC = await openApp(hostC);
  const again = await ask(asker);
  expect(again.status).toBe(200);
  expect(again.body.answers).toEqual(first.body.answers);
  expect([...askerErrors, ...errorsB, ...errorsC]).toEqual([]);
  expect(await unhandledIn(hostC)).toEqual([]);
});

test('memory: 300 sequential mixed requests; live tensors back to baseline after each; the engine worker heap grows < 8 MiB', async ({ page }) => {
  test.setTimeout(600_000);
  const errors = await openApp(page);
  const heap = await engineWorkerHeap(page);
  const run = (from: number, to: number) =>
    page.evaluate(
      async ({ from, to, LONG }) => {
        const R = (window as any).jevReliability;
        const jev = (window as any).jev;
        const surface = { decisions: jev.decisions, chat: jev.chat, fetch: fetch.bind(window) };
        const jobs = R.mixedJobs(300300, 240);
        const w = window as any;
        w.__sawChat ??= false;
        const wrong: string[] = [];
        for (let i = from; i < to; i++) {
          if (i % 10 === 9) {
            // Aborted mid-stream, then a request behind it (the engine stops at its next token).
            const c = new AbortController();
            const stream = await jev.chat.completions.create({ ...LONG, seed: i, stream: true }, { signal: c.signal });
            let n = 0;
            await (async () => {
              for await (const _ of stream) if (++n === 2) c.abort();
            })().catch(() => undefined);
            await jev.decisions.create({ model: 'jev', state: 'fence', questions: { q: { type: 'noul' } } });
          } else {
            const job = jobs[i % jobs.length];
            await R.serve(surface, job, location.origin);
            w.__sawChat ||= job.kind === 'chat';
          }
          // Everything live between requests is the prefix cache's (2 layers × key and value a prompt).
          const status = await jev.status();
          const live = status.counters.liveTensors;
          const want = status.prefixCache.entries * 4;
          if (live !== want) wrong.push(`request ${i}: ${live} live tensors, not ${want}`);
        }
        return wrong;
      },
      { from, to, LONG },
    );
  // The prefix cache grows up to its budget by design: it is emptied before each heap reading, so
  // that what is compared is what a leak would leave.
  const clear = () => page.evaluate(() => (window as any).jev.cache.clear());
  expect(await run(0, 50)).toEqual([]);
  await clear();
  const warm = await heap();
  expect(await run(50, 300)).toEqual([]);
  await clear();
  const end = await heap();
  expect(end.used - warm.used, `worker heap ${warm.used} → ${end.used}`).toBeLessThan(8 * 1024 * 1024);
  expect(end.buffers - warm.buffers, `worker ArrayBuffers ${warm.buffers} → ${end.buffers}`).toBeLessThan(8 * 1024 * 1024);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});
