/**
 * `jev-local serve --model ID` with no --backend: the page's engine in-process on onnxruntime-node.
 * Its decisions over HTTP equal the same request through the Node engine path the engine tests
 * use (test/support/local-client.ts, an independent Engine and client) at fp32 within 1e-4; its chat
 * (greedy) is the same text; a stream ends in [DONE]; /v1/models names the model; the prefix
 * cache fills; the bounded queue answers 429; a bad body is the page's 400. The bundled
 * TinyStories-656K starts with no --host (no network).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, DecisionResponse } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { startServer, type RunningServer } from '../../src/server/serve.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, TINY, TINYSTORIES, VENDORED } from '../support/models.ts';
import { embeddedOptions, post } from './support/served.ts';

const TOL = 1e-4;
const PATH = '/inference/jev/api/alpha/decisions';
const QUESTIONS = {
  cat: { type: 'noul', instructions: 'Is there a cat in the story?' },
  mood: { type: 'choice', instructions: 'How does the story feel?', criteria: { happy: 'Joyful', sad: 'Unhappy', scary: 'Frightening' } },
  size: { type: 'score', instructions: 'How long is the story, 0 to 4?', criteria: ['tiny', 'short', 'medium', 'long', 'very long'] },
} as const;

function expectSame(a: DecisionResponse, b: DecisionResponse): void {
  expect(Object.keys(b.answers).sort()).toEqual(Object.keys(a.answers).sort());
  for (const [key, x] of Object.entries(a.answers)) {
    const y = b.answers[key]!;
    expect(y.type).toBe(x.type);
    if (x.type === 'noul' && y.type === 'noul') expect(Math.abs(y.noul - x.noul), key).toBeLessThan(TOL);
    if ('probabilities' in x && 'probabilities' in y) {
      for (const [k, p] of Object.entries(x.probabilities)) expect(Math.abs((y.probabilities as Record<string, number>)[k]! - p), `${key}.${k}`).toBeLessThan(TOL);
    }
    if (x.type === 'score' && y.type === 'score') expect(Math.abs(y.score - x.score), key).toBeLessThan(TOL);
  }
}

for (const [model, root, host] of [
  [TINYSTORIES, VENDORED, null],
  [TINY, GENERATED, GENERATED],
] as const) {
  describe(`the embedded server on ${model} (host ${host ?? 'unset: bundled'})`, () => {
    let server: RunningServer;
    let page: JevClient;
    beforeAll(async () => {
      server = await startServer(embeddedOptions(model, { host, maxQueued: 1 }));
      ({ client: page } = await localClient(root, model));
    }, 120_000);
    afterAll(async () => {
      await server?.close();
      page?.terminate();
    });

    it('answers decisions as the Node engine path does, within 1e-4 at fp32', async () => {
      for (const state of ['Once upon a time there was a little cat named Tom. He was very happy.', 'The dog ran away and the girl cried all day.']) {
        const body = { model: 'jev', state, questions: QUESTIONS };
        const res = await post(server, PATH, body);
        expect(res.status, await res.clone().text()).toBe(200);
        const mine = (await res.json()) as DecisionResponse;
        const reference = await page.decisions.create(body);
        expectSame(reference, mine);
      }
      const status = await server.engine.status();
      expect(status.device).toBe('cpu');
      expect(status.dtype).toBe('fp32');
      expect(status.prefixCache.entries).toBeGreaterThan(0);
    });

    it('chats as the Node engine path does (greedy), and streams', async () => {
      const body = { model: 'jev', messages: [{ role: 'user', content: 'Tell me a story about a cat.' }], max_tokens: 16, temperature: 0 };
      const res = await post(server, '/v1/chat/completions', body);
      expect(res.status, await res.clone().text()).toBe(200);
      const mine = (await res.json()) as ChatCompletion;
      const reference = (await page.chat.completions.create(body)) as ChatCompletion;
      expect(mine.choices[0]!.message.content).toBe(reference.choices[0]!.message.content);
      expect(mine.usage).toEqual(reference.usage);
      const stream = await post(server, '/v1/chat/completions', { ...body, stream: true });
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      const text = await stream.text();
      const deltas = text
        .split('\n\n')
        .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
        .map((e) => JSON.parse(e.slice(6)) as { choices: { delta: { content?: string } }[] });
      expect(deltas.map((d) => d.choices[0]?.delta.content ?? '').join('')).toBe(reference.choices[0]!.message.content);
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    });

    it('lists the model, and refuses bad bodies and a full queue as the page does', async () => {
      const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((m) => m.id)).toContain('jev');
      const bad = { model: 'jev', state: 'x' };
      const [mine, theirs] = [await post(server, PATH, bad), await page.fetch(PATH, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(bad) })];
      expect(mine.status).toBe(400);
      expect(await mine.json()).toEqual(await theirs.json());
      // maxQueued 1: one served, one waiting; of four sent at once, two are refused 429 with Retry-After.
      const long = { model: 'jev', messages: [{ role: 'user', content: 'A long story.' }], max_tokens: 24, temperature: 0 };
      const answers = await Promise.all(Array.from({ length: 4 }, () => post(server, '/v1/chat/completions', long)));
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 429, 429]);
      const refused = answers.find((r) => r.status === 429)!;
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('queue_full');
      await Promise.all(answers.filter((r) => !r.bodyUsed).map((r) => r.body?.cancel()));
    });
  });
}
