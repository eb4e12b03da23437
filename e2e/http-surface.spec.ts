import { expect, test, type Page } from './support/warm-context.ts';
import { CLIENT_BUNDLE } from './support/client-bundle.ts';
import { MIRROR } from './support/env.ts';
import { parseDecisionRequest, questionFingerprint } from '../src/contract/index.ts';

const DECISION = {
  model: 'jev',
  state: 'I was charged twice. Please refund the duplicate.',
  questions: {
    refund: { type: 'noul', instructions: 'Is the customer asking for money back?' },
    team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Charges and refunds', support: 'Other requests' } },
    anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'furious'] },
  },
};

/** The playground on the tiny model, controlled by its service worker, with the HTTP clients loaded. */
async function open(page: Page) {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: CLIENT_BUNDLE });
}

test.describe('the HTTP surface on the page origin', () => {
  test('plain fetch to the decision path and to /v1/systemone, and the model list', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (body) => {
      const post = (path: string) =>
        fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer anything' }, body: JSON.stringify(body) }).then(
          async (r) => ({ status: r.status, body: await r.json() }),
        );
      const models = await fetch('/v1/models').then((r) => r.json());
      return { a: await post('/inference/jev/api/alpha/decisions'), b: await post('/v1/systemone'), models };
    }, DECISION);
    expect(out.a.status).toBe(200);
    expect(Object.keys(out.a.body.answers).sort()).toEqual(['anger', 'refund', 'team']);
    expect(out.a.body.provider).toBe('wasm');
    expect(out.b.body.answers).toEqual(out.a.body.answers);
    expect(out.models.object).toBe('list');
    expect(out.models.data[0]).toMatchObject({ id: 'jev', object: 'model' });
  });

  test('the openai client with baseURL location.origin + /v1, streamed and not', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async () => {
      const openai = new (globalThis as any).OpenAI({ apiKey: 'local', baseURL: location.origin + '/v1', dangerouslyAllowBrowser: true });
      const req = { model: 'jev', messages: [{ role: 'user', content: 'Tell a story.' }], temperature: 0, max_tokens: 16 };
      const done = await openai.chat.completions.create(req);
      const stream = await openai.chat.completions.create({ ...req, stream: true });
      let text = '';
      let chunks = 0;
      for await (const c of stream) {
        text += c.choices[0]?.delta?.content ?? '';
        chunks++;
      }
      const viaFetch = new (globalThis as any).OpenAI({ apiKey: 'local', baseURL: location.origin + '/v1', dangerouslyAllowBrowser: true, fetch: (window as any).jev.fetch });
      const direct = await viaFetch.chat.completions.create(req);
      let streamedDirect = '';
      for await (const c of await viaFetch.chat.completions.create({ ...req, stream: true })) streamedDirect += c.choices[0]?.delta?.content ?? '';
      return { done: done.choices[0].message.content, text, chunks, direct: direct.choices[0].message.content, streamedDirect, finish: done.choices[0].finish_reason };
    });
    expect(out.text).toBe(out.done);
    expect(out.direct).toBe(out.done);
    expect(out.streamedDirect).toBe(out.done);
    expect(out.chunks).toBeGreaterThan(2);
  });

  test("the AI SDK's experimental_decide through @ai-sdk/typesafe-ai: against the origin and through client.fetch", async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (state) => {
      const g = globalThis as any;
      const questions = {
        refund: { type: 'boolean', instructions: 'Is the customer asking for money back?' },
        team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Charges and refunds', support: 'Other requests' } },
        anger: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'furious'] },
      };
      const viaOrigin = g.createTypeSafeAi({ apiKey: 'local', baseURL: location.origin + '/v1' });
      const viaFetch = g.createTypeSafeAi({ apiKey: 'local', baseURL: 'http://jev.local/v1', fetch: (window as any).jev.fetch });
      const a = await g.experimental_decide({ model: viaOrigin.evaluationModel('jev'), state, questions });
      const b = await g.experimental_decide({ model: viaFetch.evaluationModel('jev'), state, questions });
      return { a: a.answers, b: b.answers };
    }, DECISION.state);
    expect(out.a.refund.type).toBe('boolean');
    expect(out.a.refund.probability).toBeGreaterThan(0);
    expect(out.a.team.choice).toMatch(/^(billing|support)$/);
    expect(out.a.anger.type).toBe('score');
    expect(out.b).toEqual(out.a);
  });

  test('every error status of CONTRACT §3 with its body', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (decision) => {
      const call = async (path: string, init: RequestInit) => {
        const r = await fetch(path, init);
        return { status: r.status, body: await r.json(), allow: r.headers.get('allow') };
      };
      const json = (body: unknown) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      return {
        invalid: await call('/inference/jev/api/alpha/decisions', json({ ...decision, questions: { q: { type: 'maybe' } } })),
        badJson: await call('/v1/chat/completions', json('{"model":')),
        unknownModel: await call('/v1/chat/completions', json({ model: 'gpt-x', messages: [{ role: 'user', content: 'hi' }] })),
        notJson: await call('/v1/systemone', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'hello' }),
        wrongMethod: await call('/v1/chat/completions', { method: 'GET' }),
        tooLong: await call('/v1/systemone', json({ ...decision, state: 'word '.repeat(5000) })),
        tooLarge: await call('/v1/systemone', json('{"state":"' + 'x'.repeat(33 * 1024 * 1024) + '"}')),
      };
    }, DECISION);
    const expectBody = (r: { status: number; body: any }, status: number, code: string, param: string | null = null) => {
      expect(r.status).toBe(status);
      expect(r.body.error).toMatchObject({ code, param });
      expect(typeof r.body.error.message).toBe('string');
      expect(typeof r.body.error.type).toBe('string');
    };
    expectBody(out.invalid, 400, 'invalid_request', 'questions.q.type');
    expectBody(out.badJson, 400, 'invalid_json');
    expectBody(out.unknownModel, 404, 'model_not_found', 'model');
    expectBody(out.notJson, 415, 'unsupported_media_type');
    expectBody(out.wrongMethod, 405, 'method_not_allowed');
    expect(out.wrongMethod.allow).toBe('POST');
    expectBody(out.tooLong, 422, 'context_length_exceeded', 'state');
    expectBody(out.tooLarge, 413, 'payload_too_large');
  });

  test('cancelling a streamed response frees the engine', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async () => {
      const jev = (window as any).jev;
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'jev', messages: [{ role: 'user', content: 'Go on and on.' }], max_tokens: 900, stop: [], stream: true }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      await reader.read();
      await reader.cancel();
      const before = (await jev.status()).counters.tokensFed;
      const next = await jev.decisions.create({ model: 'jev', state: 'x', questions: { q: { type: 'noul', instructions: 'ok?' } } });
      const after = (await jev.status()).counters.tokensFed;
      return { fedMeanwhile: after - before, answered: next.answers.q.type };
    });
    expect(out.answered).toBe('noul');
    // The decision itself reads a few dozen tokens; a generation left running would have read hundreds more.
    expect(out.fedMeanwhile).toBeLessThan(200);
  });
});

test('a saved calibration profile applies by id through the service worker, as inline through the facade', async ({ page }) => {
  await open(page);
  const plain = await page.evaluate((body) => (window as any).jev.decisions.create(body), DECISION);
  const normalized = parseDecisionRequest(DECISION).questions;
  const entry = (key: string, answers: string[], fit: object) => ({
    key, type: normalized[key]!.type, answers, fit, conformal: { scores: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] }, fit_items: 10, holdout: null,
  });
  const profile = {
    object: 'calibration_profile', id: 'http-profile', model: plain.model, calibrate: false, created: '2026-11-23T00:00:00Z',
    questions: {
      [questionFingerprint(normalized['refund']!)]: entry('refund', ['true', 'false'], { method: 'platt', a: 1.5, b: -0.25 }),
      [questionFingerprint(normalized['team']!)]: entry('team', ['billing', 'support'], { method: 'temperature', temperature: 2 }),
      [questionFingerprint(normalized['anger']!)]: entry('anger', ['0', '1', '2'], { method: 'temperature', temperature: 0.5 }),
    },
  };
  const out = await page.evaluate(async ({ body, profile }) => {
    const jev = (window as any).jev;
    jev.calibration.save(profile);
    const extras = { prediction_set: { alpha: 0.3 }, include: ['answer_mass'] };
    const viaSw = await fetch('/inference/jev/api/alpha/decisions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, calibration: 'http-profile', ...extras }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const unknown = await fetch('/v1/systemone', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...body, calibration: 'no-such-profile' }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const inline = await jev.decisions.create({ ...body, calibration: profile, ...extras });
    return { viaSw, unknown, inline };
  }, { body: DECISION, profile });

  expect(out.viaSw.status).toBe(200);
  expect(out.viaSw.body.answers).toEqual(out.inline.answers);
  expect(out.unknown.status).toBe(400);
  expect(out.unknown.body.error).toMatchObject({ code: 'invalid_request', param: 'calibration' });
  // Independently: Platt on noul, a temperature on the choice and the score.
  const a = out.viaSw.body.answers;
  const p = plain.answers.refund.noul;
  const platt = 1 / (1 + Math.exp(-(1.5 * Math.log(p / (1 - p)) - 0.25)));
  expect(Math.abs(a.refund.noul - platt)).toBeLessThan(1e-9);
  const tempered = (probs: Record<string, number>, t: number) => {
    const w = Object.fromEntries(Object.entries(probs).map(([k, v]) => [k, v ** (1 / t)]));
    const total = Object.values(w).reduce((x, y) => x + y, 0);
    return Object.fromEntries(Object.entries(w).map(([k, v]) => [k, v / total]));
  };
  for (const [key, t] of [['team', 2], ['anger', 0.5]] as const) {
    const expected = tempered(plain.answers[key].probabilities, t);
    for (const k of Object.keys(expected)) expect(Math.abs(a[key].probabilities[k] - expected[k]!), `${key}.${k}`).toBeLessThan(1e-9);
    // alpha 0.3 over 9 scores: q̂ = the ⌈10 · 0.7⌉ = 7th smallest = 0.6; the set is every answer with 1 − p ≤ 0.6.
    const set = Object.keys(expected).filter((k) => 1 - expected[k]! <= 0.6);
    const best = Object.keys(expected).reduce((x, y) => (expected[y]! > expected[x]! ? y : x));
    expect([...a[key].prediction_set].sort()).toEqual((set.length > 0 ? set : [best]).sort());
    expect(a[key].answer_mass).toBeGreaterThan(0);
  }
});
