/**
 * The request front both engines share (src/engine/request-front.ts): validation before the
 * engine is asked, the decision's context bound, the chat's model name, cancellation by call id,
 * the model list; and that the browser's `Engine` and the server's `RemoteEngine` answer the
 * same bad bodies with the same errors, as they now go through the one front.
 */
import { describe, expect, it } from 'vitest';
import { JevError, type ChatCompletion, type DecisionResponse } from '../../src/contract/index.ts';
import { Engine } from '../../src/engine/engine.ts';
import { lookUpModel, RequestFront, type FrontModel } from '../../src/engine/request-front.ts';
import type { ServingBackend } from '../../src/server/backend.ts';
import { RemoteEngine } from '../../src/server/remote-engine.ts';

/** A model whose tokenizer reads one token per character, with a context of 64. */
const MODEL: FrontModel = { id: 'org/tiny', contextLength: 64, encode: (text) => Array.from(text, (c) => c.charCodeAt(0)) };
const DECISION = { model: 'jev', state: 'The parcel arrived broken.', questions: { refund: { type: 'noul', instructions: 'Refund?' } } };
const CHAT = { model: 'jev', messages: [{ role: 'user', content: 'Hello.' }] };

/** A front over `MODEL` that records how often the engine was asked to serve. */
function front() {
  const served: AbortSignal[] = [];
  const f = new RequestFront<FrontModel>({
    ownedBy: 'local',
    serve: async (signal, work) => {
      served.push(signal);
      return work(MODEL);
    },
  });
  return { f, served };
}

async function rejection(p: Promise<unknown>): Promise<JevError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(JevError.is(e)).toBe(true);
  return e as JevError;
}

const answer = {} as DecisionResponse;
const completion = {} as ChatCompletion;

describe('the request front', () => {
  it('refuses a bad body with the field named before the engine is asked to serve', async () => {
    const { f, served } = front();
    const e = await rejection(f.decide({ ...DECISION, questions: { refund: { type: 'noul', instructions: 5 } } }, { id: 'c1' }, async () => answer));
    expect([e.code, e.param]).toEqual(['invalid_request', 'questions.refund.instructions']);
    const c = await rejection(f.chat({ model: 'jev', messages: 'hi' }, { id: 'c2' }, async () => completion));
    expect([c.code, c.param]).toEqual(['invalid_request', 'messages']);
    expect(served).toEqual([]);
  });

  it('hands the engine the parsed request, and the model it served on', async () => {
    const { f } = front();
    let seen: unknown = null;
    await f.decide(DECISION, { id: 'c1' }, async (model, request) => ((seen = [model.id, request.questions['refund']!.instructions]), answer));
    expect(seen).toEqual(['org/tiny', 'Refund?']);
  });

  it('refuses a decision whose state alone is far past the context, before the work runs', async () => {
    const { f } = front();
    let ran = false;
    const e = await rejection(f.decide({ ...DECISION, state: 'x'.repeat(5000) }, { id: 'c1' }, async () => ((ran = true), answer)));
    expect([e.code, e.param]).toEqual(['context_length_exceeded', 'state']);
    expect(ran).toBe(false);
  });

  it('a chat names "jev" or the loaded model; another name is model_not_found, naming both', async () => {
    const { f } = front();
    const ran: string[] = [];
    for (const name of ['jev', 'org/tiny']) await f.chat({ ...CHAT, model: name }, { id: name }, async (_m, request) => (ran.push(request.model), completion));
    expect(ran).toEqual(['jev', 'org/tiny']);
    const e = await rejection(f.chat({ ...CHAT, model: 'org/other' }, { id: 'c3' }, async () => completion));
    expect([e.code, e.param, e.status]).toEqual(['model_not_found', 'model', 404]);
    expect(e.message).toBe('The model "org/other" does not exist here; use "jev" or "org/tiny".');
    expect(() => lookUpModel('JEV', MODEL)).toThrow(/does not exist here/);
  });

  it('cancel(id) aborts that call and no other, while it runs; after it ends the id is forgotten', async () => {
    const { f, served } = front();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const a = f.decide(DECISION, { id: 'a' }, async (_m, _r, signal) => {
      await held;
      signal.throwIfAborted();
      return answer;
    });
    const b = f.decide(DECISION, { id: 'b' }, async () => {
      await held;
      return answer;
    });
    await Promise.resolve();
    f.cancel('a');
    release();
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    await expect(b).resolves.toBe(answer);
    expect(served.map((s) => s.aborted)).toEqual([true, false]);
    // The same id again is a new call: the old cancel does not reach it, and cancelling an ended call does nothing.
    f.cancel('b');
    await expect(f.decide(DECISION, { id: 'a' }, async (_m, _r, signal) => (signal.throwIfAborted(), answer))).resolves.toBe(answer);
  });

  it('lists "jev", and the loaded model where there is one, owned by who serves them', () => {
    const { f } = front();
    expect(f.models(null)).toEqual({ object: 'list', data: [{ id: 'jev', object: 'model', created: 1_763_769_600, owned_by: 'local' }] });
    expect(f.models('org/tiny').data.map((m) => [m.id, m.owned_by])).toEqual([
      ['jev', 'local'],
      ['org/tiny', 'local'],
    ]);
  });
});

describe('the browser engine and the server engine answer alike', () => {
  // Neither is loaded: a bad body is refused before either looks for its model; a good one finds none.
  const engine = new Engine({ runtime: {}, isNode: true });
  const remote = new RemoteEngine({ backend: { kind: 'vllm' } as ServingBackend, backendModel: 'tiny' });

  const bodies: [string, unknown][] = [
    ['no body', undefined],
    ['a model that is not jev', { ...DECISION, model: 'gpt-4' }],
    ['instructions that are a number', { ...DECISION, questions: { refund: { type: 'noul', instructions: 5 } } }],
    ['a state that is a number', { ...DECISION, state: 12 }],
  ];
  for (const [what, body] of bodies) {
    it(`a decision with ${what}`, async () => {
      const [a, b] = await Promise.all([rejection(engine.decide(body, { id: 'e' })), rejection(remote.decide(body, { id: 'r' }))]);
      expect(a.code).toMatch(/^(invalid_request|model_not_found)$/);
      expect([b.code, b.param, b.message]).toEqual([a.code, a.param, a.message]);
    });
  }

  it('a chat with no messages, and a good chat with no model loaded', async () => {
    const bad = { model: 'jev', messages: [] };
    const [a, b] = await Promise.all([rejection(engine.chat(bad, { id: 'e' })), rejection(remote.chat(bad, { id: 'r' }))]);
    expect([b.code, b.param, b.message]).toEqual([a.code, a.param, a.message]);
    const [x, y] = await Promise.all([rejection(engine.chat(CHAT, { id: 'e' })), rejection(remote.chat(CHAT, { id: 'r' }))]);
    expect([x.code, y.code]).toEqual(['engine_unavailable', 'engine_unavailable']);
  });

  it('the model list differs only in who owns the models', async () => {
    const [a, b] = await Promise.all([engine.models(), remote.models()]);
    expect(b).toEqual({ ...a, data: a.data.map((m) => ({ ...m, owned_by: 'vllm' })) });
  });
});
