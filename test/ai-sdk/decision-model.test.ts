/**
 * The AI SDK's own `experimental_decide`, unmodified, against `jevLocal(client).decisionModel()`
 * over a client on an in-process engine: its result validation (complete distributions over the
 * option keys summing to 1, score equal to the weighted mean, the choice a most probable option)
 * passes, and every number equals, bit for bit, a direct `client.decisions.create` of the same
 * state and questions in the Jev shape. Refusal on both sides of the label-mass floor, file parts
 * refused by name, and the same provider over a remote client.
 */
import { experimental_decide, Experimental_DecisionRefusalError } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { jevLocal } from '../../src/ai-sdk/index.ts';
import { JevError, parseDecisionRequest, questionFingerprint, type ChoiceAnswer, type DecisionResponse, type NoulAnswer, type ScoreAnswer } from '../../src/contract/index.ts';
import { answerOrder } from '../../src/engine/decision/apply-calibration.ts';
import { createLocalClient } from '../../src/client/local-client.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED } from '../support/models.ts';

const MODEL = 'tiny-random-llama3';
const STATE = 'I was charged twice for my order and I want the duplicate refunded today.';
const QUESTIONS = {
  refund: { type: 'boolean', instructions: 'Is the customer asking for money back?' },
  team: { type: 'choice', instructions: 'Which team should handle it?', criteria: { billing: 'Charges and refunds', shipping: 'Deliveries', support: null } },
  anger: { type: 'score', instructions: 'How angry is the customer?', criteria: ['calm', 'annoyed', 'angry', 'furious'] },
} as const;
/** The same questions in the Jev shape: `boolean` is `noul`. */
const JEV_QUESTIONS = { ...QUESTIONS, refund: { type: 'noul', instructions: QUESTIONS.refund.instructions } };

const sum = (p: Record<string, number>) => Object.values(p).reduce((a, b) => a + b, 0);

/** The AI SDK's answers against the Jev response's, number for number. */
function expectSameAnswers(answers: Record<string, any>, direct: DecisionResponse) {
  const refund = direct.answers['refund'] as NoulAnswer;
  const team = direct.answers['team'] as ChoiceAnswer;
  const anger = direct.answers['anger'] as ScoreAnswer;
  expect(answers['refund']).toEqual({ type: 'boolean', probability: refund.noul });
  expect(answers['team']).toEqual({ type: 'choice', choice: team.choice, probabilities: team.probabilities });
  expect(answers['anger']).toEqual({ type: 'score', score: anger.score, probabilities: anger.probabilities });
}

describe(`jevLocal(client).decisionModel() under experimental_decide, on ${MODEL}`, () => {
  let client: JevClient;
  let engine: Engine;
  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, MODEL));
  });

  it('passes the AI SDK validation and equals the Jev shape bit for bit', async () => {
    const provider = jevLocal(client);
    const result = await experimental_decide({ model: provider.decisionModel('jev'), state: STATE, questions: QUESTIONS, maxRetries: 0 });
    const direct = await client.decisions.create({ model: 'jev', state: STATE, questions: JEV_QUESTIONS, include: ['answer_mass'] });
    expectSameAnswers(result.answers, direct);
    expect(result.usage).toEqual({ inputTokens: direct.usage.input_tokens, outputTokens: direct.usage.output_tokens, totalTokens: direct.usage.input_tokens + direct.usage.output_tokens });

    // Independent of the engine's own arithmetic: the distributions are complete and sum to 1,
    // the score is Σ i·p, the choice a most probable option.
    const team = result.answers['team'] as { choice: string; probabilities: Record<string, number> };
    const anger = result.answers['anger'] as { score: number; probabilities: Record<string, number> };
    expect(Object.keys(team.probabilities).sort()).toEqual(['billing', 'shipping', 'support']);
    expect(Object.keys(anger.probabilities)).toEqual(['0', '1', '2', '3']);
    expect(Math.abs(sum(team.probabilities) - 1)).toBeLessThan(1e-9);
    expect(Math.abs(sum(anger.probabilities) - 1)).toBeLessThan(1e-9);
    expect(anger.score).toBeCloseTo(Object.entries(anger.probabilities).reduce((s, [i, p]) => s + Number(i) * p, 0), 12);
    expect(Math.max(...Object.values(team.probabilities))).toBe(team.probabilities[team.choice]);

    const metadata = result.providerMetadata!['jev'] as any;
    expect(metadata.id).toMatch(/^dec_/);
    expect((result.response as { id?: string }).id).toBe(metadata.id);
    for (const key of ['refund', 'team', 'anger']) expect(metadata.answerMass[key]).toBe((direct.answers[key] as NoulAnswer).answer_mass);
    expect(metadata.confidence).toEqual({ team: (direct.answers['team'] as ChoiceAnswer).confidence, anger: (direct.answers['anger'] as ScoreAnswer).confidence });
  });

  it('reads a JSON state as the Jev shape does (keys sorted), and mixed parts as their texts joined', async () => {
    const model = jevLocal(client).decisionModel('jev');
    const order = { total: 42, items: [{ sku: 'A1', qty: 2 }], customer: { name: 'Ana', tier: 'gold' } };
    const json = await experimental_decide({ model, state: order, questions: QUESTIONS, maxRetries: 0 });
    const reordered = { customer: { tier: 'gold', name: 'Ana' }, items: [{ qty: 2, sku: 'A1' }], total: 42 };
    expectSameAnswers(json.answers, await client.decisions.create({ model: 'jev', state: reordered, questions: JEV_QUESTIONS }));

    const mixed = await experimental_decide({
      model,
      state: [{ type: 'text', text: 'Ticket from the web form:' }, { type: 'json', value: { b: [1, 2], a: 'x' } }],
      questions: QUESTIONS,
      maxRetries: 0,
    });
    const text = `Ticket from the web form:\n${JSON.stringify({ a: 'x', b: [1, 2] }, null, 2)}`;
    expectSameAnswers(mixed.answers, await client.decisions.create({ model: 'jev', state: text, questions: JEV_QUESTIONS }));

    // A JSON part that looks like text parts is still JSON (keys sorted).
    const lookalike = [{ type: 'text', text: 'hi' }];
    const asJson = await experimental_decide({ model, state: [{ type: 'json', value: lookalike }], questions: QUESTIONS, maxRetries: 0 });
    expectSameAnswers(asJson.answers, await client.decisions.create({ model: 'jev', state: JSON.stringify([{ text: 'hi', type: 'text' }], null, 2), questions: JEV_QUESTIONS }));

    // Instructions and descriptions given as JSON are their JSON text, keys sorted.
    const jsonInstructions = await experimental_decide({
      model,
      state: STATE,
      questions: { refund: { type: 'boolean', instructions: { task: 'refund?', lang: 'en' } } },
      maxRetries: 0,
    });
    const direct = await client.decisions.create({
      model: 'jev',
      state: STATE,
      questions: { refund: { type: 'noul', instructions: JSON.stringify({ lang: 'en', task: 'refund?' }, null, 2) } },
    });
    expect(jsonInstructions.answers['refund']).toEqual({ type: 'boolean', probability: (direct.answers['refund'] as NoulAnswer).noul });
  });

  it('refuses a question whose label mass is under the floor, and only that one', async () => {
    const masses = (await client.decisions.create({ model: 'jev', state: STATE, questions: JEV_QUESTIONS, include: ['answer_mass'] })).answers;
    const mass = (k: string) => (masses[k] as NoulAnswer).answer_mass!;
    const sorted = ['refund', 'team', 'anger'].sort((a, b) => mass(a) - mass(b));
    const [low, mid] = [sorted[0]!, sorted[1]!];
    expect(mass(low)).toBeLessThan(mass(mid)); // distinct masses, so a floor between them splits the questions
    const between = (mass(low) + mass(mid)) / 2;

    // Just above the lowest mass: that question is refused, the others answer as without a floor.
    const above = await jevLocal(client, { refuseBelowLabelMass: between }).decisionModel('jev').doDecide({
      state: [{ type: 'text', text: STATE }],
      questions: QUESTIONS,
    });
    const free = await jevLocal(client).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS });
    for (const key of Object.keys(QUESTIONS)) {
      if (key === low) expect(above.answers[key]).toEqual({ type: 'refusal' });
      else expect(above.answers[key]).toEqual(free.answers[key]);
    }
    // experimental_decide turns a refusal into its own error, naming the question.
    const refused = await experimental_decide({ model: jevLocal(client, { refuseBelowLabelMass: between }).decisionModel('jev'), state: STATE, questions: QUESTIONS, maxRetries: 0 }).catch((e) => e);
    expect(Experimental_DecisionRefusalError.isInstance(refused)).toBe(true);
    expect(refused.questionIds).toEqual([low]);
    // At the floor exactly (not below it): answered.
    const at = await jevLocal(client, { refuseBelowLabelMass: mass(low) }).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS });
    expect(at.answers[low]).toEqual(free.answers[low]);
    // A floor of 1 refuses every question whose mass is below 1.
    const all = await jevLocal(client, { refuseBelowLabelMass: 1 }).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS });
    for (const key of Object.keys(QUESTIONS)) expect(all.answers[key]).toEqual(mass(key) < 1 ? { type: 'refusal' } : free.answers[key]);

    // The client's own floor (createClient({ refuseBelowLabelMass })) is the provider's default; the provider's setting overrides it.
    const strict = createLocalClient(engine, { model: MODEL, host: 'http://unused.invalid', device: 'auto', dtype: 'fp32' }, {}, {}, { refuseBelowLabelMass: between });
    await strict.ready;
    const byClient = await jevLocal(strict).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS });
    expect(byClient.answers).toEqual(above.answers);
    const overridden = await jevLocal(strict, { refuseBelowLabelMass: 0 }).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS });
    expect(overridden.answers).toEqual(free.answers);
    const remoteStrict = createRemoteClient({ baseURL: 'https://jev.example', fetch: client.fetch, refuseBelowLabelMass: between });
    expect((await jevLocal(remoteStrict).decisionModel('jev').doDecide({ state: [{ type: 'text', text: STATE }], questions: QUESTIONS })).answers).toEqual(above.answers);

    // A calibration profile's floor, where the call names one (by id among the client's saved
    // profiles, or inline), overrides the provider's either way. Identity fits: the numbers stay.
    const direct = await client.decisions.create({ model: 'jev', state: STATE, questions: JEV_QUESTIONS });
    const fits = Object.fromEntries(
      Object.entries(parseDecisionRequest({ model: 'jev', state: STATE, questions: JEV_QUESTIONS }).questions).map(([key, q]) => [
        questionFingerprint(q),
        { key, type: q.type, answers: answerOrder(q), fit: { method: 'identity' }, conformal: null, fit_items: 0, holdout: null },
      ]),
    );
    const profile = (id: string, floor: number) => ({ object: 'calibration_profile', id, model: direct.model, calibrate: false, created: '2026-12-01', questions: fits, refuse_below_label_mass: floor });
    client.calibration.save(profile('ai-sdk-refuse-all', 1));
    const byId = await jevLocal(client).decisionModel('jev').doDecide({
      state: [{ type: 'text', text: STATE }],
      questions: QUESTIONS,
      providerOptions: { jev: { calibration: 'ai-sdk-refuse-all' } },
    });
    for (const key of Object.keys(QUESTIONS)) expect(byId.answers[key]).toEqual({ type: 'refusal' });
    const inline = await jevLocal(client, { refuseBelowLabelMass: 1 }).decisionModel('jev').doDecide({
      state: [{ type: 'text', text: STATE }],
      questions: QUESTIONS,
      providerOptions: { jev: { calibration: profile('ai-sdk-refuse-none', 0) } },
    });
    for (const key of Object.keys(QUESTIONS)) expect(inline.answers[key]).toEqual(free.answers[key]);
  });

  it('refuses file parts, unknown models and a bad floor with a clear 4xx naming the field', async () => {
    const model = jevLocal(client).decisionModel('jev');
    const file = await experimental_decide({
      model,
      state: [{ type: 'text', text: STATE }, { type: 'file', data: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' }],
      questions: QUESTIONS,
      maxRetries: 0,
    }).catch((e) => e);
    expect(file).toBeInstanceOf(JevError);
    expect(file).toMatchObject({ status: 400, code: 'invalid_request', param: 'state[1]' });
    expect(file.message).toMatch(/image\/png.*reads text only/);

    const unknown = await experimental_decide({ model: jevLocal(client).decisionModel('gpt-5'), state: STATE, questions: QUESTIONS, maxRetries: 0 }).catch((e) => e);
    expect(unknown).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });

    for (const floor of [-0.1, 1.5, Number.NaN]) {
      expect(() => jevLocal(client, { refuseBelowLabelMass: floor })).toThrow(expect.objectContaining({ code: 'invalid_request', param: 'refuseBelowLabelMass' }));
    }
    // The Jev shape's own checks name the Jev field: a one-level score (the AI SDK allows it; the Jev shape needs two).
    const oneLevel = await experimental_decide({ model, state: STATE, questions: { s: { type: 'score', instructions: 'How?', criteria: ['only'] } }, maxRetries: 0 }).catch((e) => e);
    expect(oneLevel).toMatchObject({ status: 400, code: 'invalid_request', param: 'questions.s.criteria' });
  });

  it('over a remote client (createClient({ baseURL })): the same answers through the server', async () => {
    const remote = createRemoteClient({ baseURL: 'https://jev.example', fetch: client.fetch });
    const [here, there] = await Promise.all([
      experimental_decide({ model: jevLocal(client).decisionModel('jev'), state: STATE, questions: QUESTIONS, maxRetries: 0 }),
      experimental_decide({ model: jevLocal(remote).decisionModel('jev'), state: STATE, questions: QUESTIONS, maxRetries: 0 }),
    ]);
    expect(there.answers).toEqual(here.answers);
  });
});
