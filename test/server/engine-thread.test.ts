/**
 * The embedded engine runs in a worker_threads thread, supervised as the page's worker is
 * (facade/engine-supervisor.ts, hang-watchdog.ts over src/server/engine-thread.ts): a hung
 * thread (the drill: alive, looping, answering nothing) is seen by the watchdog, a streamed chat
 * it held ends in engine_unavailable, a decision sent meanwhile gets 503, and the restarted thread
 * serves the same answers as before. A thread that throws is restarted likewise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionResponse } from '../../src/contract/index.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { embeddedOptions, post } from './support/served.ts';

const PATH = '/inference/jev/api/alpha/decisions';
const DECISION = { model: 'jev', state: 'The parcel arrived broken.', questions: { refund: { type: 'noul', instructions: 'Refund?' } } };
const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 400, stop: [], temperature: 0.8, seed: 11, stream: true };
// Between passes a thread answers a ping within milliseconds; 3 s leaves room for a loaded machine.
const HANG_AFTER_MS = 3_000;

async function decide(server: RunningServer): Promise<DecisionResponse> {
  const res = await post(server, PATH, DECISION);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as DecisionResponse;
}

/** Starts a streamed chat over HTTP, runs `strike` at its first chunk, and returns its last event and what `strike` returned. */
async function streamAndStrike<T>(server: RunningServer, strike: () => Promise<T>): Promise<{ status: number; last: unknown; struck: T }> {
  const res = await post(server, '/v1/chat/completions', LONG);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  let struck: Promise<T> | null = null;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += value;
    if (!struck && text.includes('data: {')) struck = strike();
  }
  const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  const last = events.at(-1)!;
  return { status: res.status, last: last === '[DONE]' ? last : JSON.parse(last), struck: await struck! };
}

describe('the embedded engine in its own thread, supervised', () => {
  let server: RunningServer;
  let baseline: DecisionResponse;
  beforeAll(async () => {
    server = await startServer(embeddedOptions(TINY, { host: GENERATED }), { hang: { hangAfterMs: HANG_AFTER_MS } });
    baseline = await decide(server);
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  it('a hung thread is seen by the watchdog: the stream it held ends in engine_unavailable, a decision sent meanwhile gets 503, the restarted thread answers as before', async () => {
    const started = performance.now();
    let during: Promise<Response> | null = null;
    const out = await streamAndStrike(server, async () => {
      // The stream's next pass waits (hold), so the drill's reply goes out before the loop starts.
      await server.client.debug!.hold(0);
      // Resolves once the supervisor has seen the thread's death.
      const hung = server.client.debug!.crashWorker('hang');
      during = post(server, PATH, DECISION);
      return hung;
    });
    expect(out.struck).toBe(true);
    expect(out.status).toBe(200);
    const error = (out.last as { error?: { code: string; message: string } }).error;
    expect(error, JSON.stringify(out.last)).toMatchObject({ code: 'engine_unavailable' });
    expect(error!.message).toMatch(/engine stopped while serving this request \(the engine thread stopped answering for [\d.]+ s between forward passes \(allowed: 3\.0 s\)\); it restarted by itself/);
    // Seen no sooner than the watchdog allows.
    expect(performance.now() - started).toBeGreaterThan(HANG_AFTER_MS);
    const res = await during!;
    const body = (await res.json()) as { error: { code: string } } | DecisionResponse;
    // Sent during the hang: it either died with the thread (503) or waited for the restart and was served.
    if (res.status === 503) expect(body).toMatchObject({ error: { code: 'engine_unavailable' } });
    else expect(res.status).toBe(200);
    expect(server.client.debug!.restarts()).toBe(1);
    expect((await decide(server)).answers).toEqual(baseline.answers);
    expect((await server.engine.status()).state).toBe('ready');
  }, 180_000);

  it('a thread that throws (an uncaught error) is restarted, and serves again', async () => {
    expect(await server.client.debug!.crashWorker('throw')).toBe(true);
    expect(server.client.debug!.restarts()).toBe(2);
    expect((await decide(server)).answers).toEqual(baseline.answers);
  }, 180_000);
});
