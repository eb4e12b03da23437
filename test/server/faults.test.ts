/**
 * The server's faults, each answered, none hanging: a backend that is down (at start-up: refused;
 * later: 503 backend_unavailable with Retry-After, and served again once it is back), one that says
 * 503 with its own Retry-After, one too slow (504 after --timeout-ms), a malformed or incomplete
 * reply (502 naming what is missing), a tokenizer that disagrees (refused at start-up with both
 * tokenizations), a client that goes away (the backend request is aborted); and the page's own
 * refusals (400, 401, 404, 405, 413, 415) with the page's own bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JevError, limits } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { TOKENIZER_PROBE } from '../../src/server/remote-engine.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY } from '../support/models.ts';
import type { EngineLoopback } from './support/sglang-loopback.ts';
import { post, serveOptions, sharedModel, startLoopback } from './support/served.ts';

const PATH = '/inference/jev/api/alpha/decisions';
const BODY = { model: 'jev', state: 'The parcel arrived broken.', questions: { refund: { type: 'noul', instructions: 'Refund?' } } };

async function startError(p: Promise<unknown>): Promise<JevError> {
  try {
    await p;
  } catch (e) {
    return e as JevError;
  }
  throw new Error('the server started');
}

describe('the server before it serves', () => {
  it('refuses to start while the backend is down, naming it', async () => {
    const loopback = await startLoopback('sglang', await sharedModel(TINY));
    await loopback.stop();
    const e = await startError(startServer(serveOptions('sglang', loopback.url, TINY)));
    expect(e.code).toBe('backend_unavailable');
    expect(e.message).toContain(loopback.url);
  });

  for (const kind of ['sglang', 'vllm'] as const) {
    it(`refuses to start when ${kind}'s tokenizer disagrees, with both tokenizations in the message`, async () => {
      const model = await sharedModel(TINY);
      const loopback = await startLoopback(kind, model);
      loopback.skew = (ids) => [...ids.slice(0, 3), ...ids.slice(4)];
      try {
        const e = await startError(startServer(serveOptions(kind, loopback.url, TINY)));
        expect(e.code).toBe('model_load_failed');
        const ours = model.lm.tokenizer.encode(TOKENIZER_PROBE, { add_special_tokens: false });
        expect(e.message).toContain(`[${ours.join(', ')}]`);
        expect(e.message).toContain(`[${[...ours.slice(0, 3), ...ours.slice(4)].join(', ')}]`);
        expect(loopback.log.map((l) => l.path)).toEqual(['/tokenize']);
        expect(loopback.log[0]!.body).toMatchObject({ prompt: TOKENIZER_PROBE, add_special_tokens: false });
      } finally {
        await loopback.close();
      }
    });
  }
});

describe('the server when its backend fails', () => {
  let loopback: EngineLoopback;
  let server: RunningServer;
  beforeAll(async () => {
    loopback = await startLoopback('sglang', await sharedModel(TINY));
    server = await startServer(serveOptions('sglang', loopback.url, TINY, { timeoutMs: 1500 }));
  });
  afterAll(async () => {
    await server?.close();
    await loopback?.close();
  });

  it('answers 503 backend_unavailable with Retry-After while the backend is down, and serves again once it is back', async () => {
    await loopback.stop();
    const res = await post(server, PATH, BODY);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('backend_unavailable');
    await loopback.start();
    expect((await post(server, PATH, BODY)).status).toBe(200);
  });

  it("passes on the backend's own Retry-After when it answers 503 or 429", async () => {
    loopback.fault = { type: 'status', status: 503, retryAfter: 7 };
    try {
      const res = await post(server, PATH, BODY);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('7');
      loopback.fault = { type: 'status', status: 429 };
      const busy = await post(server, PATH, BODY);
      expect(busy.status).toBe(503);
      expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('backend_unavailable');
    } finally {
      loopback.fault = { type: 'none' };
    }
  });

  it('answers 504 backend_timeout once --timeout-ms passes, for a decision and a chat', async () => {
    loopback.fault = { type: 'slow', ms: 6000 };
    try {
      const started = performance.now();
      const res = await post(server, PATH, BODY);
      expect(res.status).toBe(504);
      expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'backend_timeout', message: expect.stringContaining('1500 ms') });
      expect(performance.now() - started).toBeLessThan(4500);
      const chat = await post(server, '/v1/chat/completions', { model: 'jev', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      expect(chat.status).toBe(504);
    } finally {
      loopback.fault = { type: 'none' };
    }
  });

  it('ends a stream whose engine falls silent for --timeout-ms with a last error event, backend_timeout', async () => {
    loopback.fault = { type: 'drip', ms: 8000 };
    try {
      const started = performance.now();
      const res = await post(server, '/v1/chat/completions', { model: 'jev', messages: [{ role: 'user', content: 'Hi' }], stream: true });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('"code":"backend_timeout"');
      expect(performance.now() - started).toBeLessThan(6000);
    } finally {
      loopback.fault = { type: 'none' };
    }
  });

  it('answers 502 backend_bad_reply naming what is missing or wrong in a malformed reply', async () => {
    const cases: [(body: unknown) => unknown, string][] = [
      [(b) => (b as { meta_info?: unknown }[]).map(({ meta_info: _, ...rest }) => rest), 'meta_info.input_token_logprobs is missing'],
      [(b) => (b as unknown[]).slice(1), 'expected a list of'],
      [(b) => (b as { meta_info: { input_token_logprobs: unknown[] } }[]).map((r) => ({ ...r, meta_info: { ...r.meta_info, input_token_logprobs: r.meta_info.input_token_logprobs.slice(1) } })), 'entries, expected'],
      [() => 'not json at all', 'expected a list'],
    ];
    try {
      for (const [mangle, what] of cases) {
        loopback.fault = { type: 'mangle', mangle };
        const res = await post(server, PATH, BODY);
        expect(res.status).toBe(502);
        const error = ((await res.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe('backend_bad_reply');
        expect(error.message).toContain('/generate');
        expect(error.message).toContain(what);
      }
      loopback.fault = { type: 'mangle', mangle: (b) => ({ ...(b as object), usage: undefined }) };
      const chat = await post(server, '/v1/chat/completions', { model: 'jev', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 });
      expect(chat.status).toBe(502);
      expect(((await chat.json()) as { error: { message: string } }).error.message).toContain("'usage' is missing");
    } finally {
      loopback.fault = { type: 'none' };
    }
  });

  it("aborts the backend's request when the client goes away", async () => {
    loopback.fault = { type: 'slow', ms: 300 };
    try {
      const aborter = new AbortController();
      const pending = fetch(`${server.url}${PATH}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BODY), signal: aborter.signal });
      await waitFor(() => loopback.log.at(-1)?.path === '/generate');
      const logged = loopback.log.at(-1)!;
      aborter.abort();
      await expect(pending).rejects.toThrow();
      await waitFor(() => logged.aborted);
      expect(logged.aborted).toBe(true);
    } finally {
      loopback.fault = { type: 'none' };
    }
  });
});

describe("the server's own refusals are the page's", () => {
  let loopback: EngineLoopback;
  let server: RunningServer;
  let page: JevClient;
  beforeAll(async () => {
    loopback = await startLoopback('vllm', await sharedModel(TINY));
    server = await startServer(serveOptions('vllm', loopback.url, TINY, { apiKey: 'k' }));
    ({ client: page } = await localClient(GENERATED, TINY, { apiKey: 'k' }));
  });
  afterAll(async () => {
    await server?.close();
    await loopback?.close();
  });

  const auth = { Authorization: 'Bearer k' };
  const cases: [string, string, RequestInit][] = [
    ['no key', PATH, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(BODY) }],
    ['no questions', PATH, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'jev', state: 'x' }) }],
    ['a chat body at the decision path', PATH, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'jev', messages: [] }) }],
    ['another model', '/v1/systemone', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ ...BODY, model: 'gpt' }) }],
    ['a bad chat body', '/v1/chat/completions', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'jev', messages: [{ role: 'user', content: 'x' }], temperature: 3 }) }],
    ['an unknown chat model', '/v1/chat/completions', { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] }) }],
    ['not JSON', PATH, { method: 'POST', headers: { ...auth, 'Content-Type': 'text/plain' }, body: 'hello' }],
    ['broken JSON', PATH, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"model":' }],
    ['a wrong method', PATH, { method: 'GET', headers: auth }],
    ['an unknown path', '/v1/nothing', { method: 'GET', headers: auth }],
    ['a body over 32 MiB', PATH, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: `{"state":"${'x'.repeat(limits.maxBodyBytes)}"}` }],
  ];
  for (const [name, path, init] of cases) {
    it(`answers ${name} as the page does`, async () => {
      const [mine, theirs] = [await fetch(`${server.url}${path}`, init), await page.fetch(path, init)];
      expect(mine.status).toBe(theirs.status);
      expect(mine.status).toBeGreaterThanOrEqual(400);
      expect(mine.status).toBeLessThan(500);
      expect(await mine.json()).toEqual(await theirs.json());
      expect(mine.headers.get('allow')).toBe(theirs.headers.get('allow'));
    });
  }

  it('lists the models as the page does, with the backend as their owner', async () => {
    const res = await fetch(`${server.url}/v1/models`, { headers: auth });
    const list = (await res.json()) as { data: { id: string; owned_by: string }[] };
    expect(list.data.map((m) => m.id)).toEqual(['jev', TINY]);
    expect(list.data[0]!.owned_by).toBe('vllm');
  });
});

async function waitFor(done: () => boolean, ms = 5000): Promise<void> {
  const until = performance.now() + ms;
  while (!done() && performance.now() < until) await new Promise((r) => setTimeout(r, 10));
}
