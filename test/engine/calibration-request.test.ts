/**
 * The decision request's calibration extensions, end to end through the facade on real (tiny)
 * models: `include: ["answer_mass"]`, a fitted profile (`calibration`, inline or by the id of a
 * profile saved in the client) and split-conformal prediction sets (`prediction_set`). Every
 * expected number is computed here from the raw probabilities, with the math written out in
 * this file (not the engine's calibration.ts), and the answer mass against the full-pass
 * reference of test/support/reference.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decisionResponseSchema,
  parseDecisionRequest,
  questionFingerprint,
  type Answer,
  type CalibrationProfile,
  type DecisionResponse,
  type Question,
  type QuestionFit,
} from '../../src/contract/index.ts';
import { promptFrame } from '../../src/engine/decision/decision-prompt.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { planQuestion } from '../../src/engine/decision/question-plan.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { testModels } from '../support/models.ts';
import { referenceAnswerProbabilities } from '../support/reference.ts';

const STATE = 'My invoice was charged twice this month and support has not answered for a week. I am furious.';

const QUESTIONS = {
  urgent: { type: 'noul', instructions: 'Is the ticket urgent?', criteria: { true: 'It needs an answer today', false: 'It can wait' } },
  team: { type: 'choice', instructions: 'Which team should handle it?', criteria: { billing: 'Invoices and refunds', tech: 'Bugs', sales: null, legal: 'Contracts' } },
  anger: { type: 'score', instructions: 'How angry is the customer?', criteria: ['calm', 'annoyed', 'angry', 'furious'] },
} as const;

const BASE = { model: 'jev', state: STATE, questions: QUESTIONS };
const NORMALIZED: Record<string, Question> = parseDecisionRequest(BASE).questions;

const T = 2.5;
const PLATT = { a: 1.7, b: -0.3 };
// Nonconformity scores chosen by hand (not sorted, as a profile may hold them); n = 9.
const SCORES = [0.62, 0.15, 0.9, 0.33, 0.71, 0.05, 0.48, 0.84, 0.27];

/** The engine's answer order, written out: noul true/false, choice keys, score grade indices. */
const ORDER: Record<string, string[]> = {
  urgent: ['true', 'false'],
  team: ['billing', 'tech', 'sales', 'legal'],
  anger: ['0', '1', '2', '3'],
};

const FITS: Record<string, QuestionFit> = {
  urgent: { method: 'platt', ...PLATT },
  team: { method: 'temperature', temperature: T },
  anger: { method: 'temperature', temperature: T },
};

function profileFor(
  model: string,
  options: { id?: string; calibrate?: boolean; fits?: Record<string, QuestionFit>; scores?: number[] | null; keys?: string[] } = {},
): CalibrationProfile {
  const questions: CalibrationProfile['questions'] = {};
  for (const key of options.keys ?? Object.keys(NORMALIZED)) {
    const question = NORMALIZED[key]!;
    questions[questionFingerprint(question)] = {
      key,
      type: question.type,
      answers: ORDER[key]!,
      fit: (options.fits ?? FITS)[key]!,
      conformal: options.scores === null ? null : { scores: options.scores ?? SCORES },
      fit_items: 40,
      holdout: null,
    };
  }
  return {
    object: 'calibration_profile',
    id: options.id ?? 'tickets-v1',
    model,
    calibrate: options.calibrate ?? false,
    created: '2026-11-23T00:00:00.000Z',
    questions,
  };
}

/** An answer's probabilities in ORDER (noul: [p(true), 1 − p(true)]). */
function probs(key: string, answer: Answer): number[] {
  if (answer.type === 'noul') return [answer.noul, 1 - answer.noul];
  return ORDER[key]!.map((a) => answer.probabilities[a]!);
}

// Independent math: the calibration maps, the confidences and the split-conformal set.
function withTemperature(p: readonly number[], t: number): number[] {
  const powered = p.map((x) => Math.pow(x, 1 / t));
  const total = powered.reduce((a, b) => a + b, 0);
  return powered.map((x) => x / total);
}
function withPlatt(pTrue: number, a: number, b: number): number {
  const z = a * Math.log(pTrue / (1 - pTrue)) + b;
  return 1 / (1 + Math.exp(-z));
}
function expectedCalibrated(key: string, raw: readonly number[]): number[] {
  if (key === 'urgent') {
    const p = withPlatt(raw[0]!, PLATT.a, PLATT.b);
    return [p, 1 - p];
  }
  return withTemperature(raw, T);
}
function entropyConfidence(p: readonly number[], mass: number): number {
  const h = p.reduce((s, x) => (x > 0 ? s - x * Math.log(x) : s), 0);
  return (1 - h / Math.log(p.length)) * mass;
}
function spreadConfidence(p: readonly number[], mass: number): number {
  const mean = p.reduce((s, x, i) => s + i * x, 0);
  const sd = Math.sqrt(p.reduce((s, x, i) => s + x * (i - mean) ** 2, 0));
  return (1 - sd / ((p.length - 1) / 2)) * mass;
}
/** Split conformal by hand: q̂ = the ⌈(n+1)(1−α)⌉-th smallest score (all answers past n); answers with 1 − p ≤ q̂, else the top one. */
function expectedSet(p: readonly number[], scores: readonly number[], alpha: number, answers: readonly string[]): string[] {
  const sorted = [...scores].sort((a, b) => a - b);
  const rank = Math.ceil((sorted.length + 1) * (1 - alpha));
  const set = answers.filter((_, i) => rank > sorted.length || 1 - p[i]! <= sorted[rank - 1]!);
  if (set.length > 0) return set;
  const top = p.indexOf(Math.max(...p));
  return [answers[top]!];
}

async function refusal(promise: Promise<unknown>): Promise<{ status: number; code: string; param: string | null; message: string; details?: Record<string, unknown> }> {
  const err = await promise.then(
    () => {
      throw new Error('expected the request to be refused');
    },
    (e: unknown) => e,
  );
  return err as { status: number; code: string; param: string | null; message: string; details?: Record<string, unknown> };
}

for (const m of testModels()) {
  describe.skipIf(!m.present)(`calibration extensions on ${m.id}`, () => {
    let client: JevClient;
    let engine: Engine;
    let lm: LanguageModel;
    let base: DecisionResponse;
    let model: string;
    beforeAll(async () => {
      ({ client, engine } = await localClient(m.root, m.id));
      lm = engine.languageModel!;
      base = await client.decisions.create(BASE);
      model = base.model;
    });
    afterAll(async () => {
      await lm?.dispose();
    });

    it('without the extension fields, answers carry exactly the specification’s fields', async () => {
      expect(() => decisionResponseSchema.parse(base)).not.toThrow();
      expect(Object.keys(base.answers['urgent']!).sort()).toEqual(['noul', 'type']);
      expect(Object.keys(base.answers['team']!).sort()).toEqual(['choice', 'confidence', 'probabilities', 'type']);
      expect(Object.keys(base.answers['anger']!).sort()).toEqual(['confidence', 'legend', 'probabilities', 'score', 'type']);
      // Asking for the answer mass adds that field and changes nothing else, to the last bit.
      const withMass = await client.decisions.create({ ...BASE, include: ['answer_mass'] });
      const stripped = Object.fromEntries(
        Object.entries(withMass.answers).map(([k, a]) => {
          const { answer_mass, ...rest } = a;
          expect(typeof answer_mass).toBe('number');
          return [k, rest];
        }),
      );
      expect(JSON.stringify(stripped)).toBe(JSON.stringify(base.answers));
      expect(withMass.usage).toEqual(base.usage);
    });

    it('answer_mass is the unnormalised mass on the allowed answers of an independent full-pass computation (relative 1e-4)', async () => {
      const res = await client.decisions.create({ ...BASE, include: ['answer_mass'] });
      const frame = promptFrame(lm, STATE);
      const stateIds = lm.encode(frame.prefix, frame.addSpecialTokens);
      for (const [key, question] of Object.entries(NORMALIZED)) {
        const plan = planQuestion(lm, frame, question);
        const ref = await referenceAnswerProbabilities(
          lm,
          [...stateIds, ...plan.promptIds],
          plan.labels.map((l, i) => ({ answer: l.answer, path: plan.paths[i]! })),
        );
        const mass = res.answers[key]!.answer_mass!;
        expect(mass, key).toBeGreaterThan(0);
        expect(mass, key).toBeLessThanOrEqual(1);
        // Relative: on TinyStories the mass is of the order of 1e-5 (float32 logits, cached vs. full passes).
        expect(Math.abs(mass - Math.min(1, ref.coverage)) / ref.coverage, key).toBeLessThan(1e-4);
      }
      // Confidence is sharpness × answer mass (calibrate off: the probabilities as answered).
      const team = res.answers['team']!;
      const anger = res.answers['anger']!;
      if (team.type !== 'choice' || anger.type !== 'score') throw new Error('choice and score expected');
      expect(Math.abs(team.confidence - entropyConfidence(probs('team', team), team.answer_mass!))).toBeLessThan(1e-12);
      expect(Math.abs(anger.confidence - spreadConfidence(probs('anger', anger), anger.answer_mass!))).toBeLessThan(1e-12);
      // Contextual calibration reweights the probabilities, not the mass the model put on the answers.
      const calibrated = await client.decisions.create({ ...BASE, calibrate: true, include: ['answer_mass'] });
      for (const key of Object.keys(NORMALIZED)) expect(calibrated.answers[key]!.answer_mass).toBe(res.answers[key]!.answer_mass);
    });

    it('an inline profile maps the probabilities by its fits (temperature, Platt) and recomputes confidence', async () => {
      const res = await client.decisions.create({ ...BASE, calibration: profileFor(model), include: ['answer_mass'] });
      expect(() => decisionResponseSchema.parse(res)).not.toThrow();
      for (const key of Object.keys(NORMALIZED)) {
        const raw = probs(key, base.answers[key]!);
        const want = expectedCalibrated(key, raw);
        const got = probs(key, res.answers[key]!);
        want.forEach((w, i) => expect(Math.abs(got[i]! - w), `${key} ${ORDER[key]![i]}`).toBeLessThan(1e-9));
        // A temperature above 1 flattens; Platt with a > 1 sharpens the odds.
        if (key !== 'urgent') expect(Math.max(...got)).toBeLessThanOrEqual(Math.max(...raw) + 1e-12);
        expect(res.answers[key]!.prediction_set).toBeUndefined();
      }
      const team = res.answers['team']!;
      const anger = res.answers['anger']!;
      if (team.type !== 'choice' || anger.type !== 'score') throw new Error('choice and score expected');
      const teamP = expectedCalibrated('team', probs('team', base.answers['team']!));
      const angerP = expectedCalibrated('anger', probs('anger', base.answers['anger']!));
      expect(team.choice).toBe(ORDER['team']![teamP.indexOf(Math.max(...teamP))]);
      expect(Math.abs(team.confidence - entropyConfidence(teamP, team.answer_mass!))).toBeLessThan(1e-9);
      expect(Math.abs(anger.score - angerP.reduce((s, p, i) => s + i * p, 0))).toBeLessThan(1e-9);
      expect(Math.abs(anger.confidence - spreadConfidence(angerP, anger.answer_mass!))).toBeLessThan(1e-9);
      const baseTeam = base.answers['team']!;
      if (baseTeam.type !== 'choice') throw new Error('choice expected');
      expect(team.confidence).not.toBe(baseTeam.confidence);
    });

    it('prediction sets equal the split-conformal sets computed by hand, for alpha 0.05, 0.1 and 0.5', async () => {
      const profile = profileFor(model);
      const sizes = new Set<number>();
      for (const alpha of [0.05, 0.1, 0.5]) {
        const res = await client.decisions.create({ ...BASE, calibration: profile, prediction_set: { alpha } });
        expect(() => decisionResponseSchema.parse(res)).not.toThrow();
        for (const key of Object.keys(NORMALIZED)) {
          const calibrated = expectedCalibrated(key, probs(key, base.answers[key]!));
          const want = expectedSet(calibrated, SCORES, alpha, ORDER[key]!);
          expect(res.answers[key]!.prediction_set, `${key} at alpha ${alpha}`).toEqual(want);
          sizes.add(want.length);
        }
      }
      // n = 9 scores: at alpha 0.05 the rank ⌈9.5⌉ = 10 exceeds n, so every answer is in the set.
      expect(sizes.has(4)).toBe(true);
      expect(sizes.size).toBeGreaterThan(1);
    });

    it('prediction_set.profile may differ from calibration: the set is on its own profile’s scale', async () => {
      const identity = profileFor(model, {
        id: 'raw-scale',
        fits: { urgent: { method: 'identity' }, team: { method: 'identity' }, anger: { method: 'identity' } },
        scores: [0.8, 0.7, 0.75, 0.72, 0.78, 0.74, 0.79, 0.71, 0.73],
      });
      const res = await client.decisions.create({
        ...BASE,
        calibration: profileFor(model, { scores: null }),
        prediction_set: { alpha: 0.5, profile: identity },
      });
      for (const key of Object.keys(NORMALIZED)) {
        const raw = probs(key, base.answers[key]!);
        expect(res.answers[key]!.prediction_set, key).toEqual(expectedSet(raw, identity.questions[questionFingerprint(NORMALIZED[key]!)]!.conformal!.scores, 0.5, ORDER[key]!));
        // …while the probabilities are those of `calibration`.
        const got = probs(key, res.answers[key]!);
        expectedCalibrated(key, raw).forEach((w, i) => expect(Math.abs(got[i]! - w)).toBeLessThan(1e-9));
      }
    });

    it('a profile saved in the client and named by id gives the same answers as inline, through the facade and client.fetch', async () => {
      const profile = profileFor(model, { id: `saved.${m.id}` });
      const saved = client.calibration.save(profile);
      expect(saved).toEqual(profile);
      expect(client.calibration.get(profile.id)).toEqual(profile);
      expect(client.calibration.list().map((p) => p.id)).toContain(profile.id);
      const extras = { prediction_set: { alpha: 0.1 }, include: ['answer_mass'] };
      const inline = await client.decisions.create({ ...BASE, ...extras, calibration: profile });
      const byId = await client.decisions.create({ ...BASE, ...extras, calibration: profile.id });
      expect(byId.answers).toEqual(inline.answers);
      const setById = await client.decisions.create({ ...BASE, prediction_set: { alpha: 0.1, profile: profile.id } });
      for (const key of Object.keys(NORMALIZED)) {
        const calibrated = expectedCalibrated(key, probs(key, base.answers[key]!));
        expect(setById.answers[key]!.prediction_set).toEqual(expectedSet(calibrated, SCORES, 0.1, ORDER[key]!));
      }

      const res = await client.fetch('http://localhost/inference/jev/api/alpha/decisions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ...BASE, ...extras, calibration: profile.id }),
      });
      expect(res.status).toBe(200);
      const overHttp = decisionResponseSchema.parse(await res.json());
      expect(overHttp.answers).toEqual(inline.answers);
      expect(client.calibration.delete(profile.id)).toBe(true);
      expect(client.calibration.delete(profile.id)).toBe(false);
      expect(client.calibration.get(profile.id)).toBeNull();
    });
  });
}

const tiny = testModels()[0]!;
describe.skipIf(!tiny.present)(`refusals of the calibration extensions (${tiny.id})`, () => {
  let client: JevClient;
  let engine: Engine;
  let model: string;
  let plain: DecisionResponse;
  beforeAll(async () => {
    ({ client, engine } = await localClient(tiny.root, tiny.id));
    plain = await client.decisions.create(BASE);
    model = plain.model;
  });
  afterAll(async () => {
    await engine.languageModel?.dispose();
  });

  /** Each refusal leaves the engine serving: the next plain request answers as before. */
  async function refused(body: unknown, status: number, code: string, param: string) {
    const err = await refusal(client.decisions.create(body));
    expect(err.status).toBe(status);
    expect(err.code).toBe(code);
    expect(err.param).toBe(param);
    expect(err.message).toContain(`'${param}'`);
    const again = await client.decisions.create(BASE);
    expect(again.answers).toEqual(plain.answers);
    return err;
  }

  it('an unknown profile id is a 400 naming the field and listing the saved ids; over HTTP the same', async () => {
    client.calibration.save(profileFor(model, { id: 'kept-one' }));
    const err = await refused({ ...BASE, calibration: 'missing-one' }, 400, 'invalid_request', 'calibration');
    expect(err.message).toContain('"missing-one"');
    expect(err.message).toContain('"kept-one"');
    const set = await refused({ ...BASE, prediction_set: { alpha: 0.1, profile: 'missing-two' } }, 400, 'invalid_request', 'prediction_set.profile');
    expect(set.message).toContain('"missing-two"');
    const res = await client.fetch('http://localhost/inference/jev/api/alpha/decisions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...BASE, calibration: 'missing-one' }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ code: 'invalid_request', param: 'calibration' });
    client.calibration.delete('kept-one');
  });

  it('a profile id that reaches the engine itself unresolved is a 400 saying ids are resolved by the client', async () => {
    const err = await refusal(engine.decide({ ...BASE, calibration: 'kept-one' }, { id: 'direct-1' }));
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', param: 'calibration' });
    expect(err.message).toContain('client that saved the profile');
  });

  it('a profile of another model version is a 422 naming both versions', async () => {
    const other = 'local/jev-someone-else.fp32-20261122';
    const err = await refused({ ...BASE, calibration: profileFor(other) }, 422, 'unprocessable', 'calibration');
    expect(err.message).toContain(other);
    expect(err.message).toContain(model);
  });

  it('a profile fitted with the other calibrate is a 422 naming both', async () => {
    const err = await refused({ ...BASE, calibration: profileFor(model, { calibrate: true }) }, 422, 'unprocessable', 'calibration');
    expect(err.message).toContain('calibrate true');
    expect(err.message).toContain('calibrate false');
    // With calibrate on in the request too, the same profile applies.
    const ok = await client.decisions.create({ ...BASE, calibrate: true, calibration: profileFor(model, { calibrate: true }) });
    expect(ok.answers['team']!.type).toBe('choice');
  });

  it('a profile without one of the questions (or with other answers) is a 422 naming the question key', async () => {
    const err = await refused({ ...BASE, calibration: profileFor(model, { keys: ['urgent', 'team'] }) }, 422, 'unprocessable', 'calibration');
    expect(err.message).toContain('"anger"');
    expect(err.details).toMatchObject({ question: 'anger', fingerprint: questionFingerprint(NORMALIZED['anger']!) });
    // The same question with an edited option is another question (another fingerprint).
    const edited = { ...BASE, questions: { ...QUESTIONS, team: { ...QUESTIONS.team, criteria: { ...QUESTIONS.team.criteria, hr: null } } } };
    const moved = await refused({ ...edited, calibration: profileFor(model) }, 422, 'unprocessable', 'calibration');
    expect(moved.message).toContain('"team"');
    const wrongAnswers = profileFor(model);
    wrongAnswers.questions[questionFingerprint(NORMALIZED['team']!)]!.answers = ['billing', 'tech', 'sales', 'hr'];
    const differ = await refused({ ...BASE, calibration: wrongAnswers }, 422, 'unprocessable', 'calibration');
    expect(differ.message).toContain('"team"');
    expect(differ.message).toContain('"hr"');
  });

  it('prediction sets need a profile, with conformal scores for every question', async () => {
    const none = await refused({ ...BASE, prediction_set: { alpha: 0.1 } }, 400, 'invalid_request', 'prediction_set.profile');
    expect(none.message).toContain('conformal scores');
    const noScores = await refused({ ...BASE, prediction_set: { alpha: 0.1, profile: profileFor(model, { scores: null }) } }, 422, 'unprocessable', 'prediction_set.profile');
    expect(noScores.message).toContain('"urgent"');
    const empty = await refused({ ...BASE, calibration: profileFor(model, { scores: [] }), prediction_set: { alpha: 0.1 } }, 422, 'unprocessable', 'calibration');
    expect(empty.message).toContain('no conformal scores');
  });

  it('alpha outside (0, 1) and an unknown include value are 400s naming the field', async () => {
    const profile = profileFor(model);
    for (const alpha of [0, 1, 1.5, -0.1]) {
      await refused({ ...BASE, calibration: profile, prediction_set: { alpha } }, 400, 'invalid_request', 'prediction_set.alpha');
    }
    const include = await refused({ ...BASE, include: ['answer_mass', 'logits'] }, 400, 'invalid_request', 'include[1]');
    expect(include.message).toContain('"answer_mass"');
    await refused({ ...BASE, include: ['everything'] }, 400, 'invalid_request', 'include[0]');
  });

  it('save refuses an invalid profile with a JevError naming the field, and keeps nothing', () => {
    const bad = profileFor(model, { id: 'bad-one' });
    const fp = questionFingerprint(NORMALIZED['team']!);
    bad.questions[fp]!.fit = { method: 'temperature', temperature: -1 };
    let err: { status?: number; code?: string; param?: string | null; message?: string } = {};
    try {
      client.calibration.save(bad);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ status: 400, code: 'invalid_request', param: `questions.${fp}.fit.temperature` });
    expect(err.message).toContain(`'questions.${fp}.fit.temperature'`);
    expect(client.calibration.get('bad-one')).toBeNull();
    expect(() => client.calibration.save({ ...profileFor(model), id: 'has space' })).toThrow(expect.objectContaining({ param: 'id' }));
    expect(() => client.calibration.save({ ...profileFor(model), object: 'profile' })).toThrow(expect.objectContaining({ param: 'object' }));
    expect(() => client.calibration.save('tickets-v1')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
