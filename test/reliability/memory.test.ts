// Memory: 300 sequential mixed requests (decisions, calibrated ones, plain and streamed chats,
// multi-turn chats that reuse and cut the conversation cache, HTTP and facade, aborted and
// refused ones). Live tensors (EngineStatus.counters.liveTensors, counted by the model's
// TensorLedger) return to the baseline after every request, and the JS heap stays bounded.
//
// Baseline: 0 before the first chat; from then on, the conversation cache kept for the next chat
// turn, one tensor per past key/value input of the model (kvInputs.length, 4 for the tiny model),
// whatever the request was. Heap bound: after a warm-up of 50 requests, heapUsed and
// ArrayBuffer memory (tensor data lives there in Node) each grow by less than 8 MiB over the
// remaining 250, measured after a full GC.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.ts';
import { TensorLedger } from '../../src/engine/runtime/tensor-ledger.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { mixedJobs, serve, type Job } from './workload.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const HEAP_BOUND = 8 * 1024 * 1024;
const CACHE_BYTES = 1024 * 1024;

function memory() {
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers };
}

describe('the tensor ledger', () => {
  it('counts a tensor until its first dispose, once, however often it is tracked or disposed', () => {
    const ledger = new TensorLedger();
    let released = 0;
    const make = () => ({ dispose: () => void (released += 1) });
    const a = ledger.track(make());
    const b = make();
    ledger.trackAll({ b, again: a });
    expect(ledger.live).toBe(2);
    a.dispose();
    a.dispose();
    expect(ledger.live).toBe(1);
    expect(released).toBe(2); // the tensor's own dispose still runs each time
    b.dispose();
    expect(ledger.live).toBe(0);
    expect(ledger.tracked).toBe(2);
  });
});

describe('memory: 300 sequential mixed requests', () => {
  let client: JevClient;
  let engine: Engine;
  beforeAll(async () => {
    // A prefix cache of 1 MiB: 300 requests fill it many times over, so eviction runs all along.
    ({ client, engine } = await localClient(GENERATED, TINY, {}, {}, { prefixCacheBytes: CACHE_BYTES }));
  });

  it('live tensors return to the baseline after every request; the heap stays within 8 MiB', async () => {
    const lm = engine.languageModel!;
    const live = async () => (await client.status()).counters.liveTensors;
    expect(await live()).toBe(0); // nothing held before the first request
    const perEntry = lm.kvInputs.length;
    expect(perEntry).toBeGreaterThan(0);

    const jobs = mixedJobs(300300, 240);
    let j = 0;
    let conversationTurn: { role: string; content: string }[] = [{ role: 'user', content: 'Hello there.' }];
    const kinds = new Map<string, number>();
    const step = async (i: number) => {
      const kind = i % 10;
      if (kind < 8) {
        const job: Job = jobs[j++ % jobs.length]!;
        kinds.set(`${job.kind}/${job.via}`, (kinds.get(`${job.kind}/${job.via}`) ?? 0) + 1);
        await serve(client, job);
      } else if (kind === 8) {
        // A conversation that grows (its cache is extended), and now and then is edited (its
        // cache is cut to the shared prefix) or restarted.
        kinds.set('conversation', (kinds.get('conversation') ?? 0) + 1);
        if (i % 30 === 8) conversationTurn = [{ role: 'user', content: `Start over, ${i}.` }];
        else if (i % 30 === 18 && conversationTurn.length > 2) conversationTurn = conversationTurn.slice(0, -2).concat({ role: 'user', content: 'Edited.' });
        const res = (await client.chat.completions.create({ model: 'jev', messages: conversationTurn, temperature: 0, max_tokens: 6 })) as {
          choices: { message: { content: string } }[];
        };
        conversationTurn = [...conversationTurn, { role: 'assistant', content: res.choices[0]!.message.content }, { role: 'user', content: 'And then?' }];
        if (conversationTurn.length > 12) conversationTurn = conversationTurn.slice(-3);
      } else {
        // Aborted mid-stream, refused by the engine (context), or aborted while queued.
        kinds.set('cancelled-or-refused', (kinds.get('cancelled-or-refused') ?? 0) + 1);
        const which = Math.floor(i / 10) % 3;
        if (which === 0) {
          const controller = new AbortController();
          const stream = await client.chat.completions.create(
            { model: 'jev', messages: [{ role: 'user', content: 'Go on.' }], max_tokens: 200, temperature: 0.7, seed: i, stream: true },
            { signal: controller.signal },
          );
          let n = 0;
          await expect(
            (async () => {
              for await (const _ of stream as AsyncIterable<unknown>) if (++n === 3) controller.abort();
            })(),
          ).rejects.toMatchObject({ name: 'AbortError' });
          // The facade rejects at once; the engine stops at its next token. A request queued
          // behind it runs once it has.
          await client.decisions.create({ model: 'jev', state: 'Fence.', questions: { q: { type: 'noul' } } });
        } else if (which === 1) {
          await expect(client.decisions.create({ model: 'jev', state: 'word '.repeat(3000), questions: { q: { type: 'noul' } } })).rejects.toMatchObject({
            status: 422,
          });
        } else {
          const controller = new AbortController();
          const first = client.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: 'One.' }], max_tokens: 8, temperature: 0 });
          const queued = client.decisions.create({ model: 'jev', state: 'Queued.', questions: { q: { type: 'noul' } } }, { signal: controller.signal });
          controller.abort();
          await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
          await first;
        }
      }
    };

    let warm = memory();
    for (let i = 0; i < 300; i++) {
      await step(i);
      const { counters, prefixCache } = await client.status();
      // Everything live between requests is the prefix cache's, and it keeps to its budget.
      expect(counters.liveTensors, `live tensors after request ${i}`).toBe(prefixCache.entries * perEntry);
      expect(prefixCache.bytes, `prefix cache bytes after request ${i}`).toBeLessThanOrEqual(CACHE_BYTES);
      if (i === 49) warm = memory();
    }
    expect((await client.status()).prefixCache.evictions).toBeGreaterThan(0);
    const end = memory();
    expect(end.heap - warm.heap, `heap grew from ${warm.heap} to ${end.heap}`).toBeLessThan(HEAP_BOUND);
    expect(end.buffers - warm.buffers, `ArrayBuffers grew from ${warm.buffers} to ${end.buffers}`).toBeLessThan(HEAP_BOUND);
    expect([...kinds.keys()].sort()).toEqual(['cancelled-or-refused', 'chat/facade', 'chat/http', 'conversation', 'decision/facade', 'decision/http']);
    // The ledger saw the work: thousands of tensors made and disposed.
    expect(lm.ledger.tracked).toBeGreaterThan(3000);
  });
});
