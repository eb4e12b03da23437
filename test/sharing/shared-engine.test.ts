import { afterEach, describe, expect, it } from 'vitest';
import { clientForEngine } from '../../src/client/client-for-engine.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { SharedEngine } from '../../src/facade/sharing/shared-engine.ts';
import type { LoadOptions } from '../../src/protocol/engine-api.ts';
import { FakeEngine, FakeLocks, TabChannels } from './fake-tabs.ts';

const MODEL: LoadOptions = { model: 'tiny', host: 'http://models', device: 'wasm', dtype: 'fp32' };

interface Tab {
  id: string;
  client: JevClient;
  engines: FakeEngine[];
  crash(): void;
}

let locks = new FakeLocks();
let tabs: Tab[] = [];

function openTab(id: string, load: LoadOptions = MODEL, budgetBytes?: number): Tab {
  const channels = new TabChannels();
  const engines: FakeEngine[] = [];
  const shared = new SharedEngine({
    tab: id,
    spawn: () => {
      const engine = new FakeEngine();
      engines.push(engine);
      return engine.binding();
    },
    locks: locks.view(id),
    openChannel: channels.open,
    budgetBytes,
  });
  const client = clientForEngine(shared.binding, load);
  const tab = {
    id,
    client,
    engines,
    crash: () => {
      locks.crash(id);
      channels.closeAll();
    },
  };
  tabs.push(tab);
  return tab;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check(), check.toString()).toBe(true);
}

const decision = (state: string) => ({ model: 'jev', state, questions: { q: { type: 'noul', instructions: 'ok?' } } });

async function collect(stream: AsyncIterable<{ choices: { delta: { content?: string } }[] }>): Promise<string[]> {
  const out: string[] = [];
  for await (const chunk of stream) out.push(chunk.choices[0]!.delta.content ?? '');
  return out;
}

afterEach(() => {
  for (const tab of tabs) tab.client.terminate();
  tabs = [];
  locks = new FakeLocks();
});

describe('one engine per origin and model', () => {
  it('the second and third tab use the first tab\'s engine: one load, the same answers, status names the host and counts the tabs', async () => {
    const a = openTab('A');
    await a.client.ready;
    const b = openTab('B');
    const c = openTab('C');
    await Promise.all([b.client.ready, c.client.ready]);
    expect(a.engines).toHaveLength(1);
    expect(b.engines).toHaveLength(0);
    expect(c.engines).toHaveLength(0);
    expect(a.engines[0]!.loads).toEqual([MODEL]);

    const viaA = await a.client.decisions.create(decision('the same state'));
    const viaB = await b.client.decisions.create(decision('the same state'));
    const viaC = await c.client.decisions.create(decision('the same state'));
    expect(viaB).toEqual(viaA);
    expect(viaC).toEqual(viaA);
    expect(a.engines[0]!.calls).toHaveLength(3);

    const sa = await a.client.status();
    const sb = await b.client.status();
    expect(sa.sharing).toEqual({ mode: 'origin', tab: 'A', host: 'A', hosting: true, tabs: 3 });
    expect(sb.sharing).toEqual({ mode: 'origin', tab: 'B', host: 'A', hosting: false, tabs: 3 });
    expect(sb.model).toBe('tiny');
  });

  it('a streamed chat is relayed chunk by chunk, as the host serves it to itself', async () => {
    const a = openTab('A');
    const b = openTab('B');
    await Promise.all([a.client.ready, b.client.ready]);
    const body = { model: 'jev', messages: [{ role: 'user', content: 'x' }], stream: true, text: 'one two three' };
    const own = await collect((await a.client.chat.completions.create(body)) as never);
    const relayed = await collect((await b.client.chat.completions.create(body)) as never);
    expect(relayed).toEqual(own);
    expect(relayed).toEqual(['one', 'two', 'three']);
  });

  it('tabs with different models get separate engines', async () => {
    const a = openTab('A');
    const b = openTab('B', { ...MODEL, model: 'other' });
    await Promise.all([a.client.ready, b.client.ready]);
    expect(a.engines).toHaveLength(1);
    expect(b.engines).toHaveLength(1);
    expect(b.engines[0]!.loads[0]!.model).toBe('other');
    expect((await b.client.status()).sharing).toMatchObject({ host: 'B', hosting: true, tabs: 1 });
  });

  it('an abort in a relayed tab cancels the call on the host, by its id', async () => {
    const a = openTab('A');
    const b = openTab('B');
    await Promise.all([a.client.ready, b.client.ready]);
    const engine = a.engines[0]!;
    engine.hold();
    const controller = new AbortController();
    const pending = b.client.decisions.create(decision('held'), { signal: controller.signal });
    await until(() => engine.calls.length === 1);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    await until(() => engine.cancelled.length === 1);
    expect(engine.cancelled).toEqual(engine.calls);
    engine.release();
  });

  it('the host crashes in the middle of a queue: the next tab loads and serves; calls not yet streaming are sent again, a started stream fails with engine_unavailable; none hangs', async () => {
    const a = openTab('A');
    const b = openTab('B');
    const c = openTab('C');
    await Promise.all([a.client.ready, b.client.ready, c.client.ready]);
    const first = a.engines[0]!;
    const alone = await a.client.decisions.create(decision('queued 0'));
    first.hold();
    // A stream that has begun (its first chunk came back) and decisions queued behind it.
    const stream = (await b.client.chat.completions.create({ model: 'jev', messages: [], stream: true, text: 'one two three' })) as AsyncIterable<{
      choices: { delta: { content?: string } }[];
    }>;
    const queued = [b, c, c].map((tab, i) => tab.client.decisions.create(decision(`queued ${i}`)));
    await until(() => first.calls.length === 5);

    a.crash();
    const [settled, answers] = await Promise.all([
      collect(stream).then(
        () => null,
        (e: unknown) => e,
      ),
      Promise.all(queued),
    ]);
    expect(settled).toMatchObject({ code: 'engine_unavailable', status: 503 });
    expect((settled as { retriable?: unknown }).retriable).toBe(true);
    // B asked for the lock first: it hosts now, with an engine of its own, loaded once.
    expect(b.engines).toHaveLength(1);
    expect(b.engines[0]!.loads).toEqual([MODEL]);
    expect(c.engines).toHaveLength(0);
    expect(answers[0]).toEqual(alone);
    expect(b.engines[0]!.calls).toHaveLength(3);
    expect((await c.client.status()).sharing).toEqual({ mode: 'origin', tab: 'C', host: 'B', hosting: false, tabs: 2 });
    expect(await c.client.decisions.create(decision('queued 0'))).toEqual(alone);
  });

  it('a host that unloads passes the engine on to the next tab', async () => {
    const a = openTab('A');
    const b = openTab('B');
    await Promise.all([a.client.ready, b.client.ready]);
    const report = await a.client.unload();
    expect(report.freed.modelBytes).toBe(1000);
    expect(a.engines[0]!.terminated).toBe(true);
    await expect(a.client.decisions.create(decision('x'))).rejects.toMatchObject({ code: 'engine_unavailable' });
    const answer = await b.client.decisions.create(decision('x'));
    expect(b.engines).toHaveLength(1);
    expect(answer).toEqual({ answers: { echo: JSON.stringify(decision('x')).length } });
    // Loading again joins as a relayed tab.
    await a.client.load({});
    expect((await a.client.status()).sharing).toMatchObject({ host: 'B', hosting: false, tabs: 2 });
  });

  it('a load of another model that fails leaves the tab serving the model it had, as a lone engine does', async () => {
    const a = openTab('A', MODEL, 1500);
    await a.client.ready;
    // Another model next to this one passes the budget: refused, and the first model serves on.
    await expect(a.client.load({ model: 'other' })).rejects.toMatchObject({ code: 'model_load_failed', details: { reason: 'insufficient_memory' } });
    expect((await a.client.status()).state).toBe('ready');
    expect(await a.client.decisions.create(decision('x'))).toEqual({ answers: { echo: JSON.stringify(decision('x')).length } });
  });

  it('engines of different models stay within the origin\'s memory budget: a load past it is refused, and loads once the other engine is gone', async () => {
    const a = openTab('A', MODEL, 1500);
    await a.client.ready;
    const b = openTab('B', { ...MODEL, model: 'other' }, 1500);
    const refused = await b.client.ready.then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'model_load_failed', status: 503, retriable: false, details: { reason: 'insufficient_memory', needed: 1000, available: 500 } });
    await expect(b.client.decisions.create(decision('x'))).rejects.toMatchObject({ code: 'model_load_failed' });
    expect((await b.client.status()).state).toBe('idle');
    // A tab of A's model shares A's engine: no more memory, no refusal.
    const c = openTab('C', MODEL, 1500);
    await c.client.ready;
    expect(c.engines).toHaveLength(0);
    a.crash();
    await c.client.decisions.create(decision('x')); // C took over A's model: still one engine of 1000 bytes
    await expect(b.client.load({})).rejects.toMatchObject({ code: 'model_load_failed' });
    c.crash();
    const status = await b.client.load({});
    expect(status.state).toBe('ready');
    expect(await b.client.decisions.create(decision('x'))).toEqual({ answers: { echo: JSON.stringify(decision('x')).length } });
  });
});
