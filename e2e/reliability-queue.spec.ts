// Reliability in Chromium, part 4: the queue's bound (limits.maxQueued, 256 by default). With the
// engine held at its first forward pass (jev.debug.hold: the first request is running and the rest
// wait, by construction), 1 + 256 requests are admitted; a flood past that gets 429 queue_full with
// Retry-After through the service worker, and the same error through the facade; once released,
// every admitted request is served with the answers it gets alone.
import { expect, test } from './support/warm-context.ts';
import { openApp, unhandledIn } from './reliability-support.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

test('a flood past the queue bound gets 429 with Retry-After (HTTP) or queue_full (facade); the requests already queued are all served', async ({ page }) => {
  const errors = await openApp(page);
  const out = await page.evaluate(async () => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const N = 257;
    const body = (i: number) => ({ ...R.PROBE_DECISION, state: `Request ${i}: my parcel is late.` });
    const post = (i: number) =>
      fetch(R.PATHS.decisions, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body(i)) }).then(async (r) => ({
        status: r.status,
        retryAfter: r.headers.get('Retry-After'),
        body: await r.json(),
      }));
    const alone = [];
    for (let i = 0; i < N; i++) alone.push((await jev.decisions.create(body(i))).answers);

    await jev.debug.hold(0);
    // 257 admitted: the first runs (held), 256 wait, all sent through the service worker.
    const admitted = Array.from({ length: N }, (_, i) => post(i));
    // They reach the page's client through the relay; status() counts them.
    while ((await jev.status()).queue.inFlight < N) await new Promise((r) => setTimeout(r, 20));
    const refusedFacade = await jev.decisions.create(body(999)).then(
      () => null,
      (e: any) => ({ code: e.code, status: e.status, details: e.details }),
    );
    const flood = await Promise.all(Array.from({ length: 8 }, (_, i) => post(100 + i)));
    await jev.debug.release();
    const served = await Promise.all(admitted);
    const after = await post(0);
    return { alone, refusedFacade, flood, served, after };
  });
  expect(out.refusedFacade).toEqual({ code: 'queue_full', status: 429, details: { retry_after_s: expect.any(Number), waiting: 256, max_queued: 256 } });
  for (const r of out.flood) {
    expect(r.status).toBe(429);
    expect(r.retryAfter).toMatch(/^[1-9][0-9]*$/);
    expect(r.body.error).toMatchObject({ code: 'queue_full', param: null });
    expect(r.body.error.message).toMatch(/256 requests are already waiting, the most it queues \(limits\.maxQueued\)/);
  }
  expect(out.served.map((r: any) => r.status)).toEqual(Array(257).fill(200));
  expect(outcomeDiff(out.served.map((r: any) => r.body.answers), out.alone)).toEqual([]); // within 1e-6 (the prefix cache)
  expect(out.after.status).toBe(200);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});
