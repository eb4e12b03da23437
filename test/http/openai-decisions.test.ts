// OpenAI's Decisions shape (`POST /v1/decisions`): the unmodified `openai` client's `decisions.create`
// through the facade's fetch, against the Jev endpoint for the same request, written by hand (the
// rendered state, the question keys, the option keys and grade labels): the same numbers, bit for bit,
// from the same prefix-cache state. Refusal on both sides of the floor; usage against the cache's counters.
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient } from '../../src/client/local-client.ts';
import {
  decisionEndpoints,
  parseDecisionRequest,
  questionFingerprint,
  decisionResponseSchema,
  errorBodySchema,
  modelListSchema,
  openAIDecisionSchema,
  type DecisionResponse,
  type OpenAIDecision,
} from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { answerOrder } from '../../src/engine/decision/apply-calibration.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { routes } from '../../src/http/routes.ts';
import { localClient } from '../support/local-client.ts';
import { expected, JEV, REQUEST } from '../support/openai-decision-fixture.ts';
import { GENERATED, TINY } from '../support/models.ts';

const ORIGIN = 'http://localhost';

const openaiOver = (client: JevClient) => new OpenAI({ baseURL: `${ORIGIN}/v1`, apiKey: 'local', fetch: client.fetch, maxRetries: 0 });

describe("OpenAI's Decisions shape over the Jev engine path", () => {
  let client: JevClient;
  let engine: Engine;
  let jev: DecisionResponse;
  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, TINY));
    await client.cache.clear();
    jev = decisionResponseSchema.parse(await client.decisions.create(JEV));
  });

  it('the openai client, client.fetch and the method answer as the Jev endpoint does, bit for bit', async () => {
    await client.cache.clear();
    const viaOpenAI = (await openaiOver(client).decisions.create(REQUEST as never)) as unknown as OpenAIDecision;
    expect(openAIDecisionSchema.parse(viaOpenAI)).toEqual(viaOpenAI);
    expect(viaOpenAI.answers).toEqual(expected(jev));
    expect(viaOpenAI.model).toBe(jev.model);
    expect(viaOpenAI.usage.input_tokens).toBe(jev.usage.input_tokens);
    expect(viaOpenAI.usage.output_tokens).toBe(jev.usage.output_tokens);
    expect(viaOpenAI.usage.total_tokens).toBe(jev.usage.input_tokens + jev.usage.output_tokens);
    expect(viaOpenAI.usage.output_tokens_details.reasoning_tokens).toBe(0);

    await client.cache.clear();
    const viaMethod = await client.decisions.createOpenAI(REQUEST);
    await client.cache.clear();
    const res = await client.fetch(`${ORIGIN}/v1/decisions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(REQUEST) });
    expect(res.status).toBe(200);
    const viaFetch = (await res.json()) as OpenAIDecision;
    for (const other of [viaMethod, viaFetch]) {
      expect(other.answers).toEqual(viaOpenAI.answers);
      expect(other.usage).toEqual(viaOpenAI.usage);
    }
  });

  it('a string input is the state itself, as a Jev string state', async () => {
    const input = 'The printer is on fire.';
    await client.cache.clear();
    const oa = await client.decisions.createOpenAI({ model: 'jev', input, questions: [{ type: 'predicate', instructions: 'Is it urgent?' }] });
    await client.cache.clear();
    const j = await client.decisions.create({ model: 'jev', state: input, questions: { q: { type: 'noul', instructions: 'Is it urgent?' } } });
    expect(oa.answers).toEqual([{ type: 'predicate', name: null, probability: (j.answers['q'] as { noul: number }).noul }]);
  });

  it("usage: cached_tokens and cache_write_tokens are the prefix cache's own counts", async () => {
    await client.cache.clear();
    const before = (await client.status()).prefixCache!;
    const first = await client.decisions.createOpenAI(REQUEST);
    const mid = (await client.status()).prefixCache!;
    expect(first.usage.input_tokens_details.cached_tokens).toBe(mid.cachedTokens - before.cachedTokens);
    expect(first.usage.input_tokens_details.cached_tokens).toBe(0);
    expect(first.usage.input_tokens_details.cache_write_tokens).toBe(mid.tokens);
    expect(first.usage.input_tokens_details.cache_write_tokens).toBeGreaterThan(0);
    // The same state again: its tokens are read from the cache, and nothing new is written.
    const again = await client.decisions.createOpenAI(REQUEST);
    const after = (await client.status()).prefixCache!;
    expect(again.usage.input_tokens_details.cached_tokens).toBe(after.cachedTokens - mid.cachedTokens);
    expect(again.usage.input_tokens_details.cached_tokens).toBe(first.usage.input_tokens_details.cache_write_tokens);
    expect(again.usage.input_tokens_details.cache_write_tokens).toBe(0);
    expect(again.usage.input_tokens).toBe(first.usage.input_tokens);
  });

  it('refuses a question below the floor and answers it at the floor; the others answer the same; the Jev shape keeps its answer', async () => {
    const masses = Object.entries(jev.answers).map(([key, a]) => [key, a.answer_mass!] as const).sort((x, y) => x[1] - y[1]);
    const [lowKey, low] = masses[0]!;
    const next = masses[1]![1];
    expect(next, 'the two lowest masses differ (else no floor separates them)').toBeGreaterThan(low);
    const index = Object.keys(JEV.questions).indexOf(lowKey);
    const load = { model: TINY, host: 'http://unused.invalid', device: 'auto' as const, dtype: 'fp32' as const };
    for (const [floor, refused] of [
      [low, false],
      [(low + next) / 2, true],
    ] as const) {
      const c = createLocalClient(engine, load, {}, {}, { refuseBelowLabelMass: floor });
      await c.ready;
      await c.cache.clear();
      const answers = (await c.decisions.createOpenAI(REQUEST)).answers;
      const want = expected(jev);
      if (refused) want[index] = { type: 'refusal', name: want[index]!.name };
      expect(answers, `floor ${floor}`).toEqual(want);
      await c.cache.clear();
      expect((await c.decisions.create(JEV)).answers).toEqual(jev.answers);
    }
    // A calibration profile's floor, where the request names one, overrides the client's either way.
    const questions = Object.fromEntries(
      Object.entries(parseDecisionRequest(JEV).questions).map(([key, q]) => [
        questionFingerprint(q),
        { key, type: q.type, answers: answerOrder(q), fit: { method: 'identity' }, conformal: null, fit_items: 0, holdout: null },
      ]),
    );
    const profile = (id: string, floor: number) => ({ object: 'calibration_profile', id, model: jev.model, calibrate: false, created: '2026-12-01', questions, refuse_below_label_mass: floor });
    client.calibration.save(profile('refuse-all', 1));
    const all = await client.decisions.createOpenAI({ ...REQUEST, calibration: 'refuse-all' });
    expect(all.answers).toEqual(REQUEST.questions.map((q) => ({ type: 'refusal', name: 'name' in q ? q.name : null })));
    const strict = createLocalClient(engine, load, {}, {}, { refuseBelowLabelMass: 1 });
    await strict.ready;
    const inline = await strict.decisions.createOpenAI({ ...REQUEST, calibration: profile('refuse-none', 0) });
    expect(inline.answers.map((a) => a.type)).toEqual(['predicate', 'choice', 'choice', 'choice', 'score']);
    expect((await strict.decisions.createOpenAI(REQUEST)).answers.every((a) => a.type === 'refusal')).toBe(true);
  });

  it('bad bodies: 4xx in OpenAI\'s error shape, naming the field', async () => {
    const cases: [unknown, number, string, string | null][] = [
      [{ ...REQUEST, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png;base64,AA' }] }] }, 400, 'invalid_request', 'input[0].content[0]'],
      [{ ...REQUEST, questions: [{ type: 'predicate', instructions: [{ type: 'input_image', image_url: 'https://x.invalid/a.png' }] }] }, 400, 'invalid_request', 'questions[0].instructions[0]'],
      [{ ...REQUEST, questions: [{ type: 'choice', instructions: 'x', choices: [{ value: 'a' }, { value: 'a' }] }] }, 400, 'invalid_request', 'questions[0].choices[1].value'],
      [{ ...REQUEST, input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] }, 400, 'invalid_request', 'input[0].call_id'],
      [{ ...REQUEST, model: 'gpt-6-luna' }, 404, 'model_not_found', 'model'],
      [{ ...REQUEST, questions: Array.from({ length: 401 }, () => ({ type: 'predicate', instructions: 'x' })) }, 400, 'invalid_request', 'questions'],
      [{ ...REQUEST, input: 'x'.repeat(100_000) + ' ' }, 422, 'context_length_exceeded', 'input'],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await client.fetch(`${ORIGIN}/v1/decisions`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      const err = errorBodySchema.parse(await res.json());
      expect([res.status, err.error.code, err.error.param], err.error.message).toEqual([status, code, param]);
      if (status === 400) expect(err.error.message).toContain(`'${param}'`);
    }
    const image = await client.decisions.createOpenAI(cases[0]![0]).catch((e: unknown) => e);
    expect(String((image as Error).message)).toMatch(/input_image part: the loaded model reads text only/);
    // The openai client raises its own APIError from that shape.
    await expect(openaiOver(client).decisions.create({ ...REQUEST, model: 'gpt-6-luna' } as never)).rejects.toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  });

  it('the loaded model id is a model of the shape; /v1/models lists the decision endpoints, each a route', async () => {
    const oa = await client.decisions.createOpenAI({ ...REQUEST, model: TINY });
    expect(oa.answers.length).toBe(5);
    const list = modelListSchema.parse(await (await client.fetch(`${ORIGIN}/v1/models`)).json());
    for (const m of list.data) expect(m.decision_endpoints).toEqual([...decisionEndpoints]);
    for (const path of decisionEndpoints) expect(routes.some((r) => r.method === 'POST' && r.path === path)).toBe(true);
  });
});
