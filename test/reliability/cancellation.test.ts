// Cancellation: aborting requests in flight and in the queue (AbortSignal on the facade; a
// queued request that was aborted never runs), closing streams half-way (facade iterator and
// HTTP body). Afterwards the engine is healthy: same answers as before, tensors at baseline.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { PROBE_CHAT, PROBE_DECISION } from './malformed.ts';
import { outcomeDiff } from './workload.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 400, temperature: 0.8, seed: 7 };
const ORIGIN = 'http://localhost';

describe('cancellation', () => {
  let client: JevClient;
  let engine: Engine;
  let lm: LanguageModel;
  let probe: { answers: unknown; text: string };
  /** Tokens a fence reads, and the most a stopped LONG chat may read: its prompt and a few tokens past the stop. */
  let fenceCost = 0;
  const stoppedWithin = (chunks: number) => chatPromptIds(lm, LONG.messages as never).length + chunks + 2;
  /** Texts the engine tokenized: a request that ran had its state or messages among them. */
  const encoded: string[] = [];
  const restore: (() => void)[] = [];

  const probes = async () => {
    const d = await client.decisions.create(PROBE_DECISION);
    const c = (await client.chat.completions.create(PROBE_CHAT)) as { choices: { message: { content: string } }[] };
    return { answers: d.answers, text: c.choices[0]!.message.content };
  };
  /** Waits until the engine has finished what it was doing (a request queued behind it runs). */
  const fence = () => client.decisions.create({ model: 'jev', state: 'fence', questions: { q: { type: 'noul' } } });
  const healthy = async () => {
    await fence();
    expect(outcomeDiff(await probes(), probe)).toEqual([]);
    const status = await client.status();
    expect(status.state).toBe('ready');
    // Nothing of the aborted requests is left: the live tensors are the prefix cache's.
    expect(status.counters.liveTensors).toBe(status.prefixCache.entries * lm.kvInputs.length);
  };

  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, TINY));
    lm = engine.languageModel!;
    probe = await probes();
    const before = lm.tokensFed;
    await fence();
    fenceCost = lm.tokensFed - before;
    const encode = lm.encode.bind(lm);
    lm.encode = (text, special) => {
      encoded.push(text);
      return encode(text, special);
    };
  });
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
  });

  it('a request aborted before it is sent rejects with an AbortError and never runs', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(client.decisions.create({ model: 'jev', state: 'PRE-ABORTED', questions: { q: { type: 'noul' } } }, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await expect(client.chat.completions.create({ ...PROBE_CHAT, messages: [{ role: 'user', content: 'PRE-ABORTED' }] }, { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    await fence();
    expect(encoded.filter((t) => t.includes('PRE-ABORTED'))).toEqual([]);
  });

  it('20 queued requests aborted while a long chat runs: each rejects at once, none ever runs', async () => {
    const settled: string[] = [];
    const long = client.chat.completions.create(LONG).then(() => settled.push('long'));
    const queued = Array.from({ length: 20 }, (_, i) => {
      const controller = new AbortController();
      const marker = `QUEUED-ABORTED-${i}`;
      const request =
        i % 2 === 0
          ? client.decisions.create({ model: 'jev', state: marker, questions: { q: { type: 'noul' } } }, { signal: controller.signal })
          : client.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: marker }], stream: i % 4 === 1, temperature: 0 }, { signal: controller.signal });
      return { controller, request: request.then(() => 'served', (e: Error) => (settled.push(marker), e.name)) };
    });
    // A request queued behind them, not aborted: it runs once the long chat is done.
    const after = client.decisions.create({ model: 'jev', state: 'QUEUED-KEPT', questions: { q: { type: 'noul' } } }).then(() => settled.push('kept'));
    for (const q of queued) q.controller.abort();
    expect(await Promise.all(queued.map((q) => q.request))).toEqual(Array(20).fill('AbortError'));
    await Promise.all([long, after]);
    // All 20 rejected before the long chat ended, and the one not aborted ran after it.
    expect(settled.slice(0, 20).every((s) => s.startsWith('QUEUED-ABORTED-'))).toBe(true);
    expect(settled.slice(20)).toEqual(['long', 'kept']);
    expect(encoded.filter((t) => t.includes('QUEUED-ABORTED'))).toEqual([]);
    expect(encoded.some((t) => t.includes('QUEUED-KEPT'))).toBe(true);
    await healthy();
  });

  it('a queued request aborted through client.fetch never runs either', async () => {
    const long = client.chat.completions.create(LONG);
    const controller = new AbortController();
    const res = client
      .fetch(`${ORIGIN}/inference/jev/api/alpha/decisions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'jev', state: 'HTTP-QUEUED-ABORTED', questions: { q: { type: 'noul' } } }),
        signal: controller.signal,
      })
      .then(
        (r) => String(r.status),
        (e: Error) => e.name,
      );
    // The body is read before the request is queued: abort once the engine holds it.
    await new Promise((r) => setTimeout(r, 0));
    controller.abort();
    expect(await res).toMatch(/^(AbortError|499)$/);
    await long;
    expect(encoded.filter((t) => t.includes('HTTP-QUEUED-ABORTED'))).toEqual([]);
    await healthy();
  });

  it('a chat aborted in flight (not streamed) stops within a token and rejects with an AbortError', async () => {
    const controller = new AbortController();
    const forward = lm.forward.bind(lm);
    let passes = 0;
    lm.forward = (...args) => {
      if (++passes === 5) controller.abort();
      return forward(...args);
    };
    restore.push(() => void (lm.forward = forward));
    await expect(client.chat.completions.create(LONG, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await fence();
    // The fence's own passes aside, generation stopped at the token after the abort.
    const fencePasses = 1 + 1; // its state, then its one question
    expect(passes - fencePasses).toBeLessThanOrEqual(6);
    await healthy();
  });

  it('a streamed chat aborted in flight: the stream ends with an AbortError, generation stops', async () => {
    const controller = new AbortController();
    const stream = (await client.chat.completions.create({ ...LONG, stream: true }, { signal: controller.signal })) as AsyncIterable<unknown>;
    let chunks = 0;
    const fed = lm.tokensFed;
    const error = await (async () => {
      for await (const _ of stream) if (++chunks === 4) controller.abort();
    })().then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.name).toBe('AbortError');
    await fence();
    expect(lm.tokensFed - fed - fenceCost).toBeLessThanOrEqual(stoppedWithin(chunks));
    await healthy();
  });

  it('closing a stream half-way (break out of the iterator) stops generation', async () => {
    const fed = lm.tokensFed;
    const stream = (await client.chat.completions.create({ ...LONG, stream: true })) as AsyncIterable<{ choices: { delta: { content?: string } }[] }>;
    let chunks = 0;
    for await (const _ of stream) if (++chunks === 3) break;
    await fence();
    expect(lm.tokensFed - fed - fenceCost).toBeLessThanOrEqual(stoppedWithin(chunks));
    await healthy();
  });

  it('closing an HTTP stream half-way (cancel the body) stops generation', async () => {
    const fed = lm.tokensFed;
    const res = await client.fetch(`${ORIGIN}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...LONG, stream: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    await fence();
    // Two reads: the role chunk and at most one more event each.
    expect(lm.tokensFed - fed - fenceCost).toBeLessThanOrEqual(stoppedWithin(2));
    await healthy();
  });

  it('many overlapping aborts, streams closed and requests completed, in a seeded order: the engine stays healthy', async () => {
    const next = seededRandom(99);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const controller = new AbortController();
        const mode = Math.floor(next() * 3);
        const body = i % 2 ? { ...LONG, max_tokens: 30, seed: i, stream: true } : { model: 'jev', state: `storm ${i}`, questions: { q: { type: 'noul' } } };
        try {
          if (i % 2) {
            const stream = (await client.chat.completions.create(body, { signal: controller.signal })) as AsyncIterable<unknown>;
            let n = 0;
            for await (const _ of stream) {
              if (mode === 0 && ++n === 2) controller.abort();
              if (mode === 1 && ++n === 2) break;
            }
          } else {
            const call = client.decisions.create(body, { signal: controller.signal });
            if (mode === 0) controller.abort();
            await call;
          }
          return 'done';
        } catch (e) {
          return (e as Error).name;
        }
      }),
    );
    expect(new Set(outcomes)).toEqual(new Set(['done', 'AbortError']));
    await healthy();
  });
});
