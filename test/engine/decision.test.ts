import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decisionResponseSchema, type DecisionRequest, type Question } from '../../src/contract/index.ts';
import { promptFrame, questionBlock } from '../../src/engine/decision/decision-prompt.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { planQuestion } from '../../src/engine/decision/question-plan.ts';
import { loadEngine, skipMessage, testModels } from '../support/models.ts';
import { referenceAnswerProbabilities } from '../support/reference.ts';

const STATE = 'Once upon a time, a little dog named Max lost his red ball in the big park. He was very sad.';

const QUESTIONS: Record<string, Question> = {
  sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: 'The dog feels sad', false: 'The dog is happy' } },
  place: {
    type: 'choice',
    instructions: 'Where did it happen?',
    criteria: { park: 'A park', home: 'At home', school: null, 'the big blue sea': 'The ocean' },
  },
  mood: { type: 'score', instructions: 'How happy is the dog?', criteria: ['very sad', 'sad', 'fine', 'happy', 'very happy'] },
};

// Option keys that stress tokenization: multi-token, sharing prefixes, one a prefix of another, non-ASCII.
const TRICKY: Question = {
  type: 'choice',
  instructions: 'Pick the best label.',
  criteria: {
    bill: null,
    billing: 'About invoices',
    'billing and payments for the whole family account': 'A long key',
    caf: null,
    café: 'Non-ASCII',
    '日本語': 'Japanese',
    'x y z': null,
    a: null,
  },
};

const ELEVEN: Question = {
  type: 'score',
  instructions: 'Rate the story from 0 to 10.',
  criteria: Array.from({ length: 11 }, (_, i) => `grade ${i}`),
};

const request = (questions: Record<string, Question>, extra: Partial<DecisionRequest> = {}) => ({
  model: 'jev',
  state: STATE,
  questions,
  ...extra,
});

let callNo = 0;
const call = () => ({ id: `t${++callNo}` });

for (const m of testModels()) {
  describe.skipIf(!m.present)(`decisions on ${m.id}`, () => {
    let engine: Engine;
    let lm: LanguageModel;
    /** The same model without the prefix cache: every request from cold, for arithmetic checked to 1e-9. */
    let cold: Engine;
    beforeAll(async () => {
      engine = await loadEngine(m.root, m.id);
      lm = engine.languageModel!;
      cold = await loadEngine(m.root, m.id, 'fp32', { prefixCacheBytes: 0 });
    });
    afterAll(async () => {
      await lm?.dispose();
      await cold?.languageModel?.dispose();
    });

    /** The engine's probabilities for one question vs. the independent full-pass computation. */
    async function expectExact(question: Question, state = STATE) {
      const res = await engine.decide({ model: 'jev', state, questions: { q: question } }, call());
      const answer = res.answers['q']!;
      const frame = promptFrame(lm, state);
      const plan = planQuestion(lm, frame, question);
      const stateIds = plan.stateIds;
      // The plan is faithful to tokenization: state + prompt + path is how the whole text reads.
      const block = questionBlock(question);
      for (const [i, label] of plan.labels.entries()) {
        const inContext = lm.encode(frame.prefix + block.text + frame.tail + frame.lead + label.surface, frame.addSpecialTokens);
        expect([...stateIds, ...plan.promptIds, ...plan.paths[i]!]).toEqual(inContext);
        expect(plan.paths[i]!.length).toBeGreaterThan(0);
      }
      const ref = await referenceAnswerProbabilities(
        lm,
        [...stateIds, ...plan.promptIds],
        plan.labels.map((l, i) => ({ answer: l.answer, path: plan.paths[i]! })),
      );
      const engineProbs: Record<string, number> =
        answer.type === 'noul' ? { true: answer.noul, false: 1 - answer.noul } : answer.probabilities;
      ref.answers.forEach((a, i) => {
        expect(Math.abs(engineProbs[a]! - ref.probabilities[i]!), `answer ${a}`).toBeLessThan(1e-4);
      });
      return { res, answer, ref };
    }

    it('answers every question type with every field of the specification', async () => {
      const res = await engine.decide(request(QUESTIONS), call());
      expect(() => decisionResponseSchema.parse(res)).not.toThrow();
      expect(Object.keys(res.answers).sort()).toEqual(['mood', 'place', 'sad']);
      expect(res.id).toMatch(/^dec_[A-Za-z0-9]{24}$/);
      expect(res.model).toMatch(/^local\/jev-[a-z0-9._-]+\.fp32-\d{8}$/);
      expect(res.provider).toBe('cpu');
      expect(res.usage.cost).toBe(0);
      const noul = res.answers['sad']!;
      expect(noul.type).toBe('noul');
      const choice = res.answers['place']!;
      if (choice.type !== 'choice') throw new Error('choice expected');
      expect(Object.keys(choice.probabilities).sort()).toEqual(['home', 'park', 'school', 'the big blue sea']);
      const best = Object.entries(choice.probabilities).sort((a, b) => b[1] - a[1])[0]![0];
      expect(choice.choice).toBe(best);
      expect(Object.values(choice.probabilities).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      const score = res.answers['mood']!;
      if (score.type !== 'score') throw new Error('score expected');
      expect(score.legend).toEqual({ 0: 'very sad', 1: 'sad', 2: 'fine', 3: 'happy', 4: 'very happy' });
      const expected = Object.entries(score.probabilities).reduce((s, [i, p]) => s + Number(i) * p, 0);
      expect(score.score).toBe(expected);
      for (const c of [choice.confidence, score.confidence]) {
        expect(c).toBeGreaterThanOrEqual(0);
        expect(c).toBeLessThanOrEqual(1);
      }
      expect(choice.confidence).not.toBe(Math.max(...Object.values(choice.probabilities)));
    });

    it('noul, choice and score probabilities equal an independent full-pass computation', async () => {
      for (const q of Object.values(QUESTIONS)) await expectExact(q);
    });

    it('multi-token, prefix-sharing and non-ASCII option keys each get their own exact probability', async () => {
      const { answer, ref } = await expectExact(TRICKY);
      if (answer.type !== 'choice') throw new Error('choice expected');
      expect(Object.keys(answer.probabilities)).toHaveLength(8);
      expect(ref.coverage).toBeGreaterThan(0);
      expect(ref.coverage).toBeLessThanOrEqual(1 + 1e-9);
    });

    it('an 11-grade scale (0 to 10) is exact and its score is the expectation', async () => {
      const { answer } = await expectExact(ELEVEN);
      if (answer.type !== 'score') throw new Error('score expected');
      expect(Object.keys(answer.probabilities)).toHaveLength(11);
      const expected = Object.entries(answer.probabilities).reduce((s, [i, p]) => s + Number(i) * p, 0);
      expect(answer.score).toBe(expected);
      expect(answer.score).toBeGreaterThanOrEqual(0);
      expect(answer.score).toBeLessThanOrEqual(10);
    });

    it('255 options each get a probability (or, past the context, a 422 with the counts)', async () => {
      const criteria = Object.fromEntries(Array.from({ length: 255 }, (_, i) => [String(i), null]));
      const body = request({ many: { type: 'choice', instructions: 'Pick one.', criteria } });
      const frame = promptFrame(lm, STATE);
      const plan = planQuestion(lm, frame, body.questions.many as Question);
      const needed = lm.encode(frame.prefix, frame.addSpecialTokens).length + plan.promptIds.length + Math.max(...plan.paths.map((p) => p.length));
      if (needed > lm.contextLength) {
        const err = await engine.decide(body, call()).catch((e) => e);
        expect(err.code).toBe('context_length_exceeded');
        expect(err.details).toMatchObject({ context_length: lm.contextLength });
        return;
      }
      const res = await engine.decide(body, call());
      const a = res.answers['many']!;
      if (a.type !== 'choice') throw new Error('choice expected');
      const values = Object.values(a.probabilities);
      expect(values).toHaveLength(255);
      expect(values.every((p) => p > 0 && p < 1)).toBe(true);
      expect(values.reduce((x, y) => x + y, 0)).toBeCloseTo(1, 9);
      expect(new Set(values.map((v) => v.toPrecision(12))).size).toBeGreaterThan(200);
    });

    it('a question answers the same alone as with 20 others', async () => {
      const alone = await engine.decide(request({ place: QUESTIONS['place']! }), call());
      const crowd: Record<string, Question> = { ...QUESTIONS };
      for (let i = 0; i < 18; i++) crowd[`extra${i}`] = { ...ELEVEN, instructions: `Rate aspect ${i}.` };
      expect(Object.keys(crowd)).toHaveLength(21);
      const many = await engine.decide(request(crowd), call());
      const a = alone.answers['place']!;
      const b = many.answers['place']!;
      if (a.type !== 'choice' || b.type !== 'choice') throw new Error('choice expected');
      for (const k of Object.keys(a.probabilities)) expect(Math.abs(a.probabilities[k]! - b.probabilities[k]!)).toBeLessThan(1e-4);
      expect(Math.abs(a.confidence - b.confidence)).toBeLessThan(1e-4);
    });

    it('the order of questions and options changes no answer', async () => {
      const reversed: Record<string, Question> = {};
      for (const k of Object.keys(QUESTIONS).reverse()) {
        const q = QUESTIONS[k]!;
        reversed[k] = q.type === 'choice' ? { ...q, criteria: Object.fromEntries(Object.entries(q.criteria).reverse()) } : q;
      }
      const a = await engine.decide(request(QUESTIONS), call());
      const b = await engine.decide(request(reversed), call());
      for (const k of Object.keys(QUESTIONS)) {
        const x = a.answers[k]!;
        const y = b.answers[k]!;
        if (x.type === 'noul' && y.type === 'noul') expect(Math.abs(x.noul - y.noul)).toBeLessThan(1e-4);
        else if (x.type !== 'noul' && y.type !== 'noul') {
          for (const o of Object.keys(x.probabilities)) expect(Math.abs(x.probabilities[o]! - y.probabilities[o]!)).toBeLessThan(1e-4);
        }
      }
    });

    it('contextual calibration divides out the prior measured on a content-free state', async () => {
      const q = { place: QUESTIONS['place']! };
      const plain = await cold.decide(request(q), call());
      const prior = await cold.decide({ model: 'jev', state: 'N/A', questions: q }, call());
      const calibrated = await cold.decide(request(q, { calibrate: true }), call());
      const [p, p0, c] = [plain, prior, calibrated].map((r) => {
        const a = r.answers['place']!;
        if (a.type !== 'choice') throw new Error('choice expected');
        return a.probabilities;
      }) as [Record<string, number>, Record<string, number>, Record<string, number>];
      const keys = Object.keys(p);
      const z = keys.reduce((s, k) => s + p[k]! / p0[k]!, 0);
      for (const k of keys) expect(Math.abs(c[k]! - p[k]! / p0[k]! / z)).toBeLessThan(1e-9);
    });

    it('counts usage: the state once plus each question', async () => {
      const res = await engine.decide(request(QUESTIONS), call());
      const frame = promptFrame(lm, STATE);
      const stateTokens = lm.encode(frame.prefix, frame.addSpecialTokens).length;
      const questionTokens = Object.values(QUESTIONS).reduce((n, q) => n + planQuestion(lm, frame, q).promptIds.length, 0);
      expect(res.usage.input_tokens).toBe(stateTokens + questionTokens);
      expect(res.usage.output_tokens).toBeGreaterThanOrEqual(3);
    });

    it('encodes the state once for all questions', async () => {
      await engine.clearCache();
      const before = lm.tokensFed;
      await engine.decide(request(QUESTIONS), call());
      const fed = lm.tokensFed - before;
      const frame = promptFrame(lm, STATE);
      const stateTokens = lm.encode(frame.prefix, frame.addSpecialTokens).length;
      const plans = Object.values(QUESTIONS).map((q) => planQuestion(lm, frame, q));
      const perQuestion = plans.map((p) => p.promptIds.length + p.scoring.rows.reduce((n, r) => n + r.length, 0));
      // Exactly: the state once, then each question's own tokens (and label rows) on top of it.
      expect(fed).toBe(stateTokens + perQuestion.reduce((a, b) => a + b, 0));
      // The naive way feeds the state again for every question.
      expect(fed).toBeLessThan(plans.length * stateTokens + perQuestion.reduce((a, b) => a + b, 0));
    });

    it('refuses a state longer than the context, with the counts', async () => {
      const long = 'the dog ran to the park and '.repeat(Math.ceil(lm.contextLength / 3));
      const err = await engine.decide({ model: 'jev', state: long, questions: { q: QUESTIONS['sad']! } }, call()).catch((e) => e);
      expect(err.status).toBe(422);
      expect(err.code).toBe('context_length_exceeded');
      expect(err.param).toBe('state');
      expect(err.message).toMatch(/\d+ tokens/);
      // and it keeps serving
      const ok = await engine.decide(request({ sad: QUESTIONS['sad']! }), call());
      expect(ok.answers['sad']!.type).toBe('noul');
    });
  });
  if (!m.present) it.skip(skipMessage(m.id, m.root), () => {});
}

describe('a failed load', () => {
  it('leaves the model that was serving in service, and reports the failure', async () => {
    const m = testModels()[0]!;
    const engine = await loadEngine(m.root, m.id);
    const before = await engine.decide({ model: 'jev', state: 'a dog', questions: { q: { type: 'noul', instructions: 'A dog?' } } }, { id: 'f1' });
    const err = await engine.load({ model: 'no-such-model', host: 'http://unused.invalid', device: 'auto', dtype: 'fp32' }).catch((e) => e);
    expect(err.code).toBe('model_load_failed');
    const status = await engine.status();
    expect(status).toMatchObject({ state: 'ready', model: m.id });
    expect(status.error).toMatch(/no-such-model/);
    await engine.clearCache(); // the same answers from cold, not ±1e-6 from the prefix cache
    const after = await engine.decide({ model: 'jev', state: 'a dog', questions: { q: { type: 'noul', instructions: 'A dog?' } } }, { id: 'f2' });
    expect(after.answers).toEqual(before.answers);
    await engine.languageModel?.dispose();
  });
});
