// The queue's bound: with the engine held (a gate in front of its forward passes, so the first
// request is running and the rest wait, by construction), a flood past 1 + maxQueued requests gets
// 429 queue_full with Retry-After (through client.fetch) or the same error (through the facade),
// at once; every request admitted before is then served, with the answers it gets alone.
import { describe, expect, it } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { Admission } from '../../src/facade/admission.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { PROBE_CHAT, PROBE_DECISION } from './malformed.ts';

const DECISION_PATH = 'http://localhost/inference/jev/api/alpha/decisions';
const decisionFor = (i: number) => ({ ...PROBE_DECISION, state: `Request ${i}: my parcel is late.` });

describe('the queue bound', () => {
  it('Admission: admits 1 + maxQueued, refuses the next with queue_full (429) naming the bound, frees a place when one settles', () => {
    let t = 0;
    const a = new Admission({ maxQueued: 2, now: () => t });
    const leaves = [a.enter(), a.enter(), a.enter()];
    let refusal: unknown;
    try {
      a.enter();
    } catch (e) {
      refusal = e;
    }
    expect(refusal).toBeInstanceOf(JevError);
    const e = refusal as JevError;
    expect({ code: e.code, status: e.status, param: e.param }).toEqual({ code: 'queue_full', status: 429, param: null });
    expect(e.message).toMatch(/2 requests are already waiting, the most it queues \(limits\.maxQueued\)\. Send it again in 1 s/);
    expect(e.details).toEqual({ retry_after_s: 1, waiting: 2, max_queued: 2 });
    // One settles after 4.2 s: a place is free again, and the typical time in flight sets Retry-After.
    t = 4200;
    leaves[0]!();
    leaves[0]!(); // twice is once
    expect(a.inFlight).toBe(2);
    const next = a.enter();
    expect(() => a.enter()).toThrow(/Send it again in 5 s/);
    next();
    expect(() => new Admission({ maxQueued: -1 })).toThrow(/limits\.maxQueued must be a whole number/);
  });

  it('a flood past the bound gets 429s at once, while every request already queued is served as it would be alone', async () => {
    const { client: alone } = await localClient(GENERATED, TINY);
    const expected = await Promise.all(Array.from({ length: 5 }, (_, i) => alone.decisions.create(decisionFor(i))));
    const expectedChat = await alone.chat.completions.create(PROBE_CHAT);

    const { client, engine } = await localClient(GENERATED, TINY, {}, { maxQueued: 5 });
    await engine.debug({ type: 'hold', after: 0 });
    const passesBefore = (await engine.status()).counters.forwardPasses;
    // 1 running (held at its first pass) + 5 waiting: the most admitted.
    const admitted = [
      ...Array.from({ length: 5 }, (_, i) => client.decisions.create(decisionFor(i))),
      client.chat.completions.create(PROBE_CHAT),
    ];
    // The flood: 10 through client.fetch, 10 through the facade, all refused at once.
    const overHttp = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        client.fetch(DECISION_PATH, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(decisionFor(100 + i)) }),
      ),
    );
    for (const res of overHttp) {
      expect(res.status).toBe(429);
      expect(res.headers.get('Retry-After')).toMatch(/^[1-9][0-9]*$/);
      const body = await res.json();
      expect(body.error).toMatchObject({ code: 'queue_full', type: 'invalid_request_error', param: null });
    }
    const overFacade = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.decisions.create(decisionFor(200 + i)).then(() => null, (e: unknown) => e)),
    );
    for (const e of overFacade) expect(e).toMatchObject({ code: 'queue_full', status: 429, details: { max_queued: 5, waiting: 5 } });
    // Nothing ran meanwhile: the first request is still held.
    expect((await engine.status()).counters.forwardPasses).toBe(passesBefore);

    await engine.debug({ type: 'release' });
    const served = await Promise.all(admitted);
    for (let i = 0; i < 5; i++) expect((served[i] as { answers: unknown }).answers).toEqual(expected[i]!.answers);
    type Completion = { choices: unknown[] };
    expect((served[5] as Completion).choices).toEqual((expectedChat as Completion).choices);
    // The bound frees as requests settle: the next is served.
    expect((await client.decisions.create(decisionFor(0))).answers).toEqual(expected[0]!.answers);
  });
});
