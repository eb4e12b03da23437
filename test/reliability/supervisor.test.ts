// Faults, in Node: the facade's supervisor over stand-in instances (an in-process engine each,
// whose "worker" can die: after its death none of its calls ever settles, as with a dead worker
// behind Comlink). Calls in flight and queued fail with engine_unavailable saying the engine
// restarted; the supervisor starts a new instance and reloads the last LoadOptions (wasm after a
// device loss); calls made meanwhile wait and are served; it gives up after repeated deaths.
// The real worker and WebGPU device are exercised in e2e/reliability.spec.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { JevError, type ChatCompletionChunk } from '../../src/contract/index.ts';
import { Engine } from '../../src/engine/engine.ts';
import { clientForEngine } from '../../src/client/client-for-engine.ts';
import { EngineSupervisor, type EngineDeath, type EngineInstance, type RestartEvent } from '../../src/facade/engine-supervisor.ts';
import { startWatchdog } from '../../src/facade/hang-watchdog.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { RUNTIME_BUILD_REASON, type EngineApi, type LoadEvent, type LoadOptions } from '../../src/protocol/engine-api.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { PROBE_CHAT, PROBE_DECISION } from './malformed.ts';

const LOAD: LoadOptions = { model: TINY, host: 'http://unused.invalid', device: 'auto', dtype: 'fp32' };
const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 400, temperature: 0.8, seed: 7 };

interface FakeInstance extends EngineInstance {
  engine: Engine;
  loads: LoadOptions[];
  kill(death: EngineDeath): void;
  terminated: boolean;
}

/** Options for the stand-in: a device-loss drill applies (as if on WebGPU); the instance dies on load. */
interface FakeOptions {
  onWebGpu?: boolean;
  dieOnLoad?: boolean;
  /** Watched like a worker (facade/hang-watchdog.ts), with this hangAfterMs: the `hang` drill stops its pongs and its passes. */
  hangAfterMs?: number;
  /**
   * Its onnxruntime is the wasm-only build (runtime-env.ts `pinRuntimeBuild`): a load that is not
   * on wasm fails as the engine's does there, with `engine_unavailable`, reason `runtime_build`.
   */
  wasmOnly?: boolean;
}

function fakeInstance(options: FakeOptions = {}): FakeInstance {
  let kill!: (death: EngineDeath) => void;
  let dead = false;
  const died = new Promise<EngineDeath>((resolve) => {
    kill = (death) => {
      if (dead) return;
      dead = true;
      resolve(death);
    };
  });
  const instance = {} as FakeInstance;
  // A watched instance answers pings from its "event loop" (a timer) until the hang drill.
  let hung = false;
  const watchdog =
    options.hangAfterMs === undefined
      ? null
      : startWatchdog(
          { hangAfterMs: options.hangAfterMs },
          () => setTimeout(() => hung || watchdog?.pong(), 1),
          (message) => kill({ type: 'hung', message }),
        );
  void died.then(() => watchdog?.stop());
  const engine: Engine = new Engine({
    runtime: { localModelPath: GENERATED },
    isNode: true,
    source: () => ({ has: async (file) => existsSync(join(GENERATED, TINY, 'onnx', file)) }),
    host: {
      fault: (fault) => kill(fault),
      beat: (beat) => hung || watchdog?.beat(beat),
      crash: (mode) => {
        if (mode === 'hang') {
          // Stuck: no more pongs, and the request in flight never takes another step.
          hung = true;
          void engine.debug({ type: 'hold', after: 0 });
          return true;
        }
        setTimeout(() => kill(mode === 'exit' ? { type: 'exited', message: 'the engine worker stopped' } : { type: 'crashed', message: 'simulated crash' }));
        return true;
      },
    },
  });
  // After death, nothing the instance was asked ever settles: only the supervisor's race ends it.
  const never = new Promise<never>(() => {});
  const live = <T,>(p: Promise<T>): Promise<T> => p.then((v) => (dead ? never : v), (e: unknown) => (dead ? never : Promise.reject(e)));
  const api: EngineApi = {
    load: (o, e) => {
      instance.loads.push(o);
      if (options.wasmOnly && o.device !== 'wasm') {
        return Promise.reject(
          new JevError('engine_unavailable', `This engine's onnxruntime is its wasm-only build (cpu), chosen by its first load, and cannot run ${o.device}.`, {
            param: 'device',
            details: { reason: RUNTIME_BUILD_REASON, build: 'cpu', device: o.device },
          }),
        );
      }
      if (options.dieOnLoad) setTimeout(() => kill({ type: 'crashed', message: 'died while loading' }));
      return live(engine.load(o, e));
    },
    status: () => live(engine.status()),
    models: () => live(engine.models()),
    decide: (b, c) => live(engine.decide(b, c)),
    extract: (b, c) => live(engine.extract(b, c)),
    chat: (b, c, on) => live(engine.chat(b, c, on)),
    cancel: (id) => live(engine.cancel(id)),
    clearCache: () => live(engine.clearCache()),
    unload: () => live(engine.unload()),
    debug: (action) => {
      if (action.type === 'lose-device' && options.onWebGpu) {
        setTimeout(() => kill({ type: 'device-lost', message: 'The WebGPU device was lost (destroyed).' }));
        return Promise.resolve(true);
      }
      return live(engine.debug(action));
    },
  };
  return Object.assign(instance, { api, died, engine, loads: [], kill, terminated: false, terminate: () => void (instance.terminated = true) });
}

function supervised(options: FakeOptions[] = [], maxRestarts?: number) {
  const instances: FakeInstance[] = [];
  const restarts: RestartEvent[] = [];
  const events: LoadEvent[] = [];
  const supervisor = new EngineSupervisor(
    () => {
      const instance = fakeInstance(options[instances.length] ?? {});
      instances.push(instance);
      return instance;
    },
    { onRestart: (e) => restarts.push(e), ...(maxRestarts === undefined ? {} : { maxRestarts }) },
  );
  const client = clientForEngine(
    { api: supervisor.api, wrapCallback: (fn) => fn, terminate: () => supervisor.terminate(), drill: (a) => supervisor.drill(a), restarts: () => supervisor.restarts },
    LOAD,
    (e) => events.push(e),
  );
  return { supervisor, client, instances, restarts, events };
}

async function rejection(p: Promise<unknown>): Promise<JevError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(JevError);
  return e as JevError;
}

describe('the supervisor', () => {
  let baseline: { answers: unknown; text: string };
  beforeAll(async () => {
    const { client } = await localClient(GENERATED, TINY);
    const d = await client.decisions.create(PROBE_DECISION);
    const c = (await client.chat.completions.create(PROBE_CHAT)) as { choices: { message: { content: string } }[] };
    baseline = { answers: d.answers, text: c.choices[0]!.message.content };
  });

  const probe = async (client: JevClient) => {
    const d = await client.decisions.create(PROBE_DECISION);
    const c = (await client.chat.completions.create(PROBE_CHAT)) as { choices: { message: { content: string } }[] };
    return { answers: d.answers, text: c.choices[0]!.message.content };
  };

  it('a crash: the streamed chat in flight and the queued requests fail with engine_unavailable; the next request is served', async () => {
    const { client, instances, restarts } = supervised();
    await client.ready;
    const stream = (await client.chat.completions.create({ ...LONG, stream: true })) as AsyncIterable<ChatCompletionChunk>;
    const queued = [client.decisions.create(PROBE_DECISION), client.chat.completions.create(PROBE_CHAT)];
    let chunks = 0;
    const streamError = (async () => {
      for await (const _ of stream) if (++chunks === 3) instances[0]!.kill({ type: 'crashed', message: 'the engine worker crashed: boom' });
    })().then(
      () => null,
      (e: unknown) => e,
    );
    const failure = (await streamError) as JevError;
    expect(failure).toBeInstanceOf(JevError);
    expect({ code: failure.code, status: failure.status, param: failure.param }).toEqual({ code: 'engine_unavailable', status: 503, param: null });
    expect(failure.message).toMatch(/engine stopped while serving this request \(the engine worker crashed: boom\); it restarted by itself/);
    for (const q of queued) expect((await rejection(q)).code).toBe('engine_unavailable');
    expect(instances[0]!.terminated).toBe(true);
    // Restarted by itself with the same LoadOptions; the next requests are served as before.
    expect(await probe(client)).toEqual(baseline);
    expect(instances).toHaveLength(2);
    expect(instances[1]!.loads).toEqual([LOAD]);
    expect(restarts).toEqual([{ restarts: 1, death: { type: 'crashed', message: 'the engine worker crashed: boom' }, device: 'auto' }]);
    expect(client.debug!.restarts()).toBe(1);
    expect((await client.status()).state).toBe('ready');
  });

  it('a hung engine (alive, answering nothing) is seen by the watchdog: its callers get engine_unavailable, it is terminated and restarted, the next request is served', async () => {
    const { client, instances, restarts } = supervised([{ hangAfterMs: 150 }, { hangAfterMs: 150 }]);
    await client.ready;
    const stream = (await client.chat.completions.create({ ...LONG, stream: true })) as AsyncIterable<ChatCompletionChunk>;
    const queued = [client.decisions.create(PROBE_DECISION), client.chat.completions.create(PROBE_CHAT)].map((q) => q.then(() => null, (e: unknown) => e as JevError));
    let chunks = 0;
    let drill: Promise<boolean> | null = null;
    const streamError = (async () => {
      for await (const _ of stream) if (++chunks === 3) drill = client.debug!.crashWorker('hang');
    })().then(
      () => null,
      (e: unknown) => e,
    );
    const failure = (await streamError) as JevError;
    expect(await drill).toBe(true);
    expect({ code: failure.code, status: failure.status }).toEqual({ code: 'engine_unavailable', status: 503 });
    expect(failure.message).toMatch(/engine stopped while serving this request \(the engine worker stopped answering for [\d.]+ s (between forward passes|in a forward pass of 1 token) \(allowed: [\d.]+ s\)\); it restarted by itself/);
    for (const q of await Promise.all(queued)) expect(q).toMatchObject({ code: 'engine_unavailable', status: 503 });
    expect(instances[0]!.terminated).toBe(true);
    expect(restarts[0]!.death.type).toBe('hung');
    expect(await probe(client)).toEqual(baseline);
    expect(instances).toHaveLength(2);
    // The new instance answers its pings: it is not taken for hung while it serves or idles.
    await new Promise((r) => setTimeout(r, 600));
    expect(await probe(client)).toEqual(baseline);
    expect(client.debug!.restarts()).toBe(1);
    client.terminate();
  });

  it('requests made while the engine restarts wait for it and are served', async () => {
    const { client, instances } = supervised();
    await client.ready;
    instances[0]!.kill({ type: 'exited', message: 'the engine worker stopped' });
    await Promise.resolve();
    const during = await Promise.all([probe(client), probe(client)]);
    expect(during).toEqual([baseline, baseline]);
    expect(instances).toHaveLength(2);
  });

  it('a WebGPU device loss: reloaded on wasm (a fallback event says why); later `auto` loads stay on wasm', async () => {
    const { client, instances, restarts, events } = supervised([{ onWebGpu: true }]);
    await client.ready;
    const inFlight = client.chat.completions.create(LONG);
    expect(await client.debug!.loseDevice()).toBe(true);
    const error = await rejection(inFlight);
    expect(error.code).toBe('engine_unavailable');
    expect(error.message).toMatch(/WebGPU device was lost.*restarted by itself on wasm/);
    expect(await probe(client)).toEqual(baseline);
    expect(instances[1]!.loads).toEqual([{ ...LOAD, device: 'wasm' }]);
    expect(restarts[0]).toMatchObject({ device: 'wasm', death: { type: 'device-lost' } });
    expect(events).toContainEqual({ type: 'fallback', from: 'webgpu', to: 'wasm', reason: 'The WebGPU device was lost (destroyed).' });
    await client.load({ dtype: 'fp32' });
    expect(instances[1]!.loads.at(-1)).toEqual({ ...LOAD, device: 'wasm' });
    // A later crash reloads on wasm too.
    await client.debug!.crashWorker();
    expect(await probe(client)).toEqual(baseline);
    expect(instances[2]!.loads).toEqual([{ ...LOAD, device: 'wasm' }]);
    // An explicit choice of WebGPU is still honoured.
    await client.load({ device: 'webgpu' }).catch(() => undefined);
    expect(instances[2]!.loads.at(-1)!.device).toBe('webgpu');
  });

  it('the crash drill through client.debug resolves once the death is seen; the next request is served', async () => {
    for (const mode of ['throw', 'exit'] as const) {
      const { client, instances } = supervised();
      await client.ready;
      const inFlight = client.decisions.create(PROBE_DECISION);
      await inFlight; // served before the drill
      const during = client.chat.completions.create(LONG);
      expect(await client.debug!.crashWorker(mode)).toBe(true);
      expect((await rejection(during)).code).toBe('engine_unavailable');
      expect(client.debug!.restarts()).toBe(1);
      expect(await probe(client)).toEqual(baseline);
      expect(instances).toHaveLength(2);
    }
  });

  it('a crash while loading: the restart loads the model, and client.ready resolves with it', async () => {
    const { client, instances } = supervised([{ dieOnLoad: true }]);
    expect(await client.ready).toMatchObject({ state: 'ready', model: TINY });
    expect(await probe(client)).toEqual(baseline);
    expect(instances).toHaveLength(2);
    expect(instances[1]!.loads).toEqual([LOAD]);
  });

  it('gives up after 3 deaths in a row without a successful load; every call then says so', async () => {
    const { client, instances } = supervised([{ dieOnLoad: true }, { dieOnLoad: true }, { dieOnLoad: true }, { dieOnLoad: true }]);
    await client.ready.catch(() => undefined);
    let error: JevError | null = null;
    for (let i = 0; i < 6 && !error?.message.includes('not restarted again'); i++) error = await rejection(client.decisions.create(PROBE_DECISION));
    expect(error!.code).toBe('engine_unavailable');
    expect(error!.message).toMatch(/4 times in a row .*not restarted again; reload the page/);
    expect(instances).toHaveLength(4);
    expect(instances.every((i) => i.terminated)).toBe(true);
  });

  it('a call aborted before the supervisor sends it is never sent (the cancel cannot overtake it)', async () => {
    const { client, instances } = supervised();
    await client.ready;
    const api = instances[0]!.api;
    const sent: string[] = [];
    const decide = api.decide;
    api.decide = (body, call) => (sent.push(call.id), decide(body, call));
    const calls = Array.from({ length: 5 }, () => {
      const controller = new AbortController();
      const call = client.decisions.create(PROBE_DECISION, { signal: controller.signal });
      controller.abort();
      return call.then(
        () => 'served',
        (e: Error) => e.name,
      );
    });
    expect(await Promise.all(calls)).toEqual(Array(5).fill('AbortError'));
    expect(await probe(client)).toEqual(baseline);
    expect(sent).toHaveLength(1); // the probe's decision only
  });

  it('terminate(): calls in flight and later ones reject with engine_unavailable', async () => {
    const { client, instances } = supervised();
    await client.ready;
    const inFlight = client.chat.completions.create(LONG);
    client.terminate();
    expect((await rejection(inFlight)).message).toMatch(/terminated/);
    expect((await rejection(client.decisions.create(PROBE_DECISION))).message).toMatch(/terminated/);
    expect(instances[0]!.terminated).toBe(true);
    expect(instances).toHaveLength(1);
  });

  it('over HTTP: a request in flight when the engine dies gets a 503 engine_unavailable body, the next one 200', async () => {
    const { client, instances } = supervised();
    await client.ready;
    const api = instances[0]!.api;
    const chat = api.chat;
    const reached = new Promise<void>((resolve) => {
      api.chat = (...args) => (resolve(), chat(...args));
    });
    const pending = client.fetch('http://localhost/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(LONG) });
    await reached;
    instances[0]!.kill({ type: 'crashed', message: 'boom' });
    const res = await pending;
    expect(res.status).toBe(503);
    expect((await res.json()).error).toMatchObject({ code: 'engine_unavailable', type: 'server_error', param: null });
    const next = await client.fetch('http://localhost/inference/jev/api/alpha/decisions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(PROBE_DECISION),
    });
    expect(next.status).toBe(200);
    expect((await next.json()).answers).toEqual(baseline.answers);
  });

  it("a worker whose onnxruntime build cannot run the device asked is replaced by a fresh one, which loads it: not a restart, and the answers are the same", async () => {
    const { client, instances, restarts, events } = supervised([{ wasmOnly: true }]);
    await client.ready;
    expect(instances).toHaveLength(2);
    expect(instances[0]!.terminated).toBe(true);
    expect(instances[0]!.loads).toEqual([LOAD]);
    expect(instances[1]!.loads).toEqual([LOAD]);
    expect(instances[1]!.terminated).toBe(false);
    expect(await probe(client)).toEqual(baseline);
    // Not a death: nothing restarted, no fallback.
    expect(restarts).toEqual([]);
    expect(client.debug!.restarts()).toBe(0);
    expect(events.filter((e) => e.type === 'fallback')).toEqual([]);
  });

  it('a wasm load stays in its worker; WebGPU asked of it later moves to a fresh worker, once: a second refusal is the load\'s error', async () => {
    const { client, instances } = supervised([{ wasmOnly: true }, { wasmOnly: true }, { wasmOnly: true }]);
    await client.load({ device: 'wasm' });
    expect(instances).toHaveLength(1);
    expect(await probe(client)).toEqual(baseline);
    const refusal = await rejection(client.load({ device: 'webgpu' }));
    expect(refusal).toMatchObject({ code: 'engine_unavailable', details: { reason: RUNTIME_BUILD_REASON } });
    // One fresh worker was tried, not a loop of them.
    expect(instances).toHaveLength(2);
    expect(instances[0]!.terminated).toBe(true);
    expect(instances[1]!.loads.map((o) => o.device)).toEqual(['webgpu']);
  });

  it('an in-process client has no worker to crash and no device to lose: the drills say so', async () => {
    const { client } = await localClient(GENERATED, TINY);
    expect(await client.debug!.crashWorker()).toBe(false);
    expect(await client.debug!.loseDevice()).toBe(false);
    expect(client.debug!.restarts()).toBe(0);
    expect(await probe(client)).toEqual(baseline);
  });
});
