// runEvaluation (src/evaluation/evaluate.ts) over a fake engine whose probabilities are fixed
// tables (so every metric is known in advance), which applies a request's calibration profile
// with the engine's own code (src/engine/decision/apply-calibration.ts): the report's metrics against
// hand-computed values; a fit and its held-out rerun against applyProfile offline; abort; a
// failing item; bad labels refused before any request.
import { describe, expect, it } from 'vitest';
import { parseDecisionRequest, type Answer, type DecisionRequestInput, type DecisionResponse, type Question } from '../../src/contract/index.ts';
import { answerOrder, calibrateAnswer, planCalibration } from '../../src/engine/decision/apply-calibration.ts';
import {
  applyProfile,
  DatasetError,
  questionMetrics,
  runEvaluation,
  type EvalItem,
  type EvaluationProgress,
  type Observation,
} from '../../src/evaluation/index.ts';
import { Xoshiro128 } from '../../scripts/models/prng.ts';
import { crossFoldSets } from '../../src/evaluation/evaluate.ts';

const CHOICE: Question = { type: 'choice', instructions: 'Which team?', criteria: { a: 'Team A', b: 'Team B', c: 'Team C' } };
const NOUL: Question = { type: 'noul', instructions: 'Is it urgent?', criteria: { true: null, false: null } };
const MODEL = 'fake@1';

/** Question key → probabilities in answer order (noul: [p(true), p(false)]), per state and calibrate. */
type Table = (state: string, calibrate: boolean) => Record<string, number[]>;

/** A decision engine answering from a table; profiles and prediction sets go through the engine's code. */
function fakeEngine(table: Table, fail: (state: string) => boolean = () => false) {
  const calls: DecisionRequestInput[] = [];
  const decide = async (input: DecisionRequestInput, options: { signal?: AbortSignal }): Promise<DecisionResponse> => {
    calls.push(input);
    options.signal?.throwIfAborted();
    const request = parseDecisionRequest(input);
    if (fail(request.state)) throw new Error(`the engine failed on "${request.state}"`);
    const plan = planCalibration(request, MODEL);
    const rows = table(request.state, request.calibrate);
    const answers: Record<string, Answer> = {};
    for (const [key, question] of Object.entries(request.questions)) {
      const order = answerOrder(question);
      const raw = rows[key]!;
      const fitted = plan ? calibrateAnswer(plan[key]!, order, raw) : null;
      const p = fitted?.probabilities ?? raw;
      let answer: Answer;
      if (question.type === 'noul') answer = { type: 'noul', noul: p[0]! };
      else {
        const probabilities = Object.fromEntries(order.map((a, i) => [a, p[i]!]));
        answer = { type: 'choice', choice: order[p.indexOf(Math.max(...p))]!, probabilities, confidence: Math.max(...p) };
      }
      if (request.include.includes('answer_mass')) answer.answer_mass = 0.5;
      if (fitted?.set) answer.prediction_set = fitted.set;
      answers[key] = answer;
    }
    return { id: 'dec_fake', model: MODEL, provider: 'fake-device', answers, usage: { input_tokens: 1, output_tokens: 1, cost: 0 } };
  };
  return { decide, calls };
}

function item(i: number, labels: EvalItem['labels'], questions: Record<string, Question> = { q: CHOICE, n: NOUL }): EvalItem {
  return { line: i + 1, id: `id${i}`, request: { model: 'jev', state: `item ${i}`, questions }, labels };
}

const itemOf = (state: string) => Number(state.split(' ')[1]);

describe('runEvaluation: metrics of a known table', () => {
  // Calibrate off:
  //   item  choice p(a, b, c)   label  argmax      noul p(true)  label  argmax
  //   0     0.7 0.2 0.1         a      a right     0.9           true   true right
  //   1     0.1 0.6 0.3         c      b wrong     0.2           false  false right
  //   2     0.2 0.3 0.5         c      c right     0.6           false  true wrong
  //   3     0.3 0.4 0.3         b      b right     0.4           true   false wrong
  // Calibrate on: every answer uniform (choice 1/3 each, noul 0.5).
  const CHOICE_P = [
    [0.7, 0.2, 0.1],
    [0.1, 0.6, 0.3],
    [0.2, 0.3, 0.5],
    [0.3, 0.4, 0.3],
  ];
  const NOUL_P = [0.9, 0.2, 0.6, 0.4];
  const items = [item(0, { q: 'a', n: true }), item(1, { q: 'c', n: false }), item(2, { q: 'c', n: 'false' }), item(3, { q: 'b', n: 'true' })];
  const table: Table = (state, calibrate) => {
    const i = itemOf(state);
    return calibrate ? { q: [1 / 3, 1 / 3, 1 / 3], n: [0.5, 0.5] } : { q: CHOICE_P[i]!, n: [NOUL_P[i]!, 1 - NOUL_P[i]!] };
  };

  it('reports calibrate off and on side by side, with the hand-computed metrics', async () => {
    const { decide, calls } = fakeEngine(table);
    const progress: EvaluationProgress[] = [];
    const report = await runEvaluation({ items, dataName: 'tickets.jsonl', decide, onProgress: (p) => progress.push(p) });
    expect(report.object).toBe('evaluation_report');
    expect(report.model).toBe(MODEL);
    expect(report.device).toBe('fake-device');
    expect(report.data).toEqual({ name: 'tickets.jsonl', items: 4 });
    expect(report.fit).toBeNull();
    expect(report.modes.map((m) => [m.calibrate, m.profile, m.held_out])).toEqual([
      [false, null, false],
      [true, null, false],
    ]);
    // Every request asks for answer_mass and carries the mode's calibrate.
    expect(calls).toHaveLength(8);
    expect(calls.every((c) => c.include?.includes('answer_mass'))).toBe(true);
    expect(calls.map((c) => c.calibrate)).toEqual([false, false, false, false, true, true, true, true]);
    expect(progress.map((p) => p.done)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(progress.every((p) => p.total === 8 && p.modes === 2)).toBe(true);
    expect(progress.map((p) => p.mode)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1]);

    const [off, on] = report.modes;
    const [choice, noul] = off!.questions;
    expect(choice!.key).toBe('q');
    expect(choice!.accuracy).toBe(0.75);
    // F1: a 2·1/(2+0+0) = 1; b 2·1/(2+1+0) = 2/3 (item 1 predicted b); c 2·1/(2+0+1) = 2/3 → 7/9
    expect(choice!.macro_f1).toBeCloseTo(7 / 9, 12);
    // Brier: 0.09+0.04+0.01, 0.01+0.36+0.49, 0.04+0.09+0.25, 0.09+0.36+0.09 = 0.14, 0.86, 0.38, 0.54 → 1.92 / 4
    expect(choice!.brier).toBeCloseTo(0.48, 12);
    expect(choice!.log_loss).toBeCloseTo(-(Math.log(0.7) + Math.log(0.3) + Math.log(0.5) + Math.log(0.4)) / 4, 12);
    // ECE: one item per bin: |1 − 0.7| + |0 − 0.6| + |1 − 0.5| + |1 − 0.4| = 2.0, / 4
    expect(choice!.ece).toBeCloseTo(0.5, 12);
    expect(choice!.confusion).toEqual([
      [1, 0, 0],
      [0, 1, 0],
      [0, 1, 1],
    ]);
    expect(choice!.mean_answer_mass).toBe(0.5);
    expect(noul!.key).toBe('n');
    expect(noul!.answers).toEqual(['true', 'false']);
    expect(noul!.accuracy).toBe(0.5);
    // Brier (noul): 2·0.1², 2·0.2², 2·0.6², 2·0.6² = 0.02, 0.08, 0.72, 0.72 → 1.54 / 4
    expect(noul!.brier).toBeCloseTo(0.385, 12);
    expect(off!.wrong.map((w) => [w.line, w.id, w.key, w.expected, w.got])).toEqual([
      [2, 'id1', 'q', 'c', 'b'],
      [3, 'id2', 'n', 'false', 'true'],
      [4, 'id3', 'n', 'true', 'false'],
    ]);
    expect(off!.wrong[0]!.p_expected).toBeCloseTo(0.3, 12);
    expect(off!.wrong[0]!.state).toBe('item 1');
    expect(off!.errors).toEqual([]);
    const { median, p90, mean } = off!.latency_ms;
    expect(median).toBeGreaterThanOrEqual(0);
    expect(p90).toBeGreaterThanOrEqual(median);
    expect(mean).toBeGreaterThanOrEqual(0);

    // Uniform: the tie goes to a (right once, item 0) and to true (right on items 0 and 3).
    expect(on!.questions[0]!.accuracy).toBe(0.25);
    expect(on!.questions[0]!.ece).toBeCloseTo(Math.abs(0.25 - 1 / 3), 12);
    expect(on!.questions[1]!.accuracy).toBe(0.5);
    expect(on!.questions[0]!.log_loss).toBeCloseTo(Math.log(3), 12);
  });

  it('records a failing item and goes on', async () => {
    const { decide, calls } = fakeEngine(table, (state) => state === 'item 2');
    const report = await runEvaluation({ items, dataName: 'd', decide, modes: [{ calibrate: false }] });
    expect(calls).toHaveLength(4);
    expect(report.modes[0]!.errors).toEqual([{ item: 2, line: 3, message: 'the engine failed on "item 2"' }]);
    expect(report.modes[0]!.questions[0]!.items).toBe(3);
    // Items 0, 1, 3: right, wrong, right.
    expect(report.modes[0]!.questions[0]!.accuracy).toBeCloseTo(2 / 3, 12);
  });

  it('stops between requests on abort, rejecting with the AbortError', async () => {
    const { decide, calls } = fakeEngine(table);
    const controller = new AbortController();
    const run = runEvaluation({
      items,
      dataName: 'd',
      decide,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 3) controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toHaveLength(3);
  });

  it('cancels the request in flight on abort', async () => {
    let calls = 0;
    const controller = new AbortController();
    const decide = (_: DecisionRequestInput, options: { signal?: AbortSignal }) =>
      new Promise<DecisionResponse>((_, reject) => {
        calls += 1;
        options.signal!.addEventListener('abort', () => reject(options.signal!.reason));
      });
    const run = runEvaluation({ items, dataName: 'd', decide, signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toBe(1);
  });

  it('refuses bad labels before sending anything, naming the line and the field', async () => {
    const { decide, calls } = fakeEngine(table);
    const cases: [EvalItem, RegExp, string][] = [
      [item(0, { missing: 'a' }), /asks no question "missing"/, 'labels.missing'],
      [item(0, { q: 'd' }), /not an option/, 'labels.q'],
      [item(0, { n: 'maybe' }), /true or false/, 'labels.n'],
      [item(0, { q: 'a' }, { q: { ...CHOICE, instructions: 'Another?' } }), /differs from the one of line 1/, 'request.questions.q'],
    ];
    for (const [bad, message, field] of cases) {
      const error = await runEvaluation({ items: [items[0]!, { ...bad, line: 9 }], dataName: 'd', decide }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatasetError);
      expect((error as DatasetError).message).toMatch(message);
      expect((error as DatasetError).line).toBe(9);
      expect((error as DatasetError).field).toBe(field);
    }
    expect(calls).toHaveLength(0);
  });
});

describe('runEvaluation: fit and the held-out rerun', () => {
  // 80 items: the model's choice probabilities softmax(z), z ~ 2·N(0,1), are overconfident: the
  // labels come from softmax(z / 2.5); noul p(true) = σ(x), labels from σ(0.4·x + 0.3).
  const n = 80;
  const rng = new Xoshiro128(2024);
  const softmax = (z: number[]) => {
    const e = z.map((x) => Math.exp(x - Math.max(...z)));
    const s = e.reduce((a, b) => a + b, 0);
    return e.map((x) => x / s);
  };
  const draw = (p: number[]) => {
    let u = rng.nextFloat();
    for (let k = 0; k < p.length; k++) if ((u -= p[k]!) < 0) return k;
    return p.length - 1;
  };
  const rows: { q: number[]; n: number[]; labelQ: number; labelN: boolean }[] = Array.from({ length: n }, () => {
    const z = [0, 1, 2].map(() => 2 * rng.nextNormal());
    const x = 3 * rng.nextNormal();
    const pTrue = 1 / (1 + Math.exp(-x));
    return { q: softmax(z), n: [pTrue, 1 - pTrue], labelQ: draw(softmax(z.map((v) => v / 2.5))), labelN: rng.nextFloat() < 1 / (1 + Math.exp(-(0.4 * x + 0.3))) };
  });
  // Each request also asks a question without labels: answered, not scored, not in the profile.
  const EXTRA: Question = { type: 'noul', instructions: 'Unlabelled?', criteria: { true: null, false: null } };
  const items = rows.map((r, i) => item(i, { q: ['a', 'b', 'c'][r.labelQ]!, n: r.labelN }, { q: CHOICE, n: NOUL, extra: EXTRA }));
  const table: Table = (state) => {
    const r = rows[itemOf(state)]!;
    return { q: r.q, n: r.n, extra: [0.5, 0.5] };
  };

  it('fits on the calibrate-off answers, reruns the held-out items with the profile, and matches applyProfile offline', async () => {
    const { decide, calls } = fakeEngine(table);
    const progress: EvaluationProgress[] = [];
    const report = await runEvaluation({
      items,
      dataName: 'd',
      decide,
      modes: [{ calibrate: false }],
      fit: { id: 'fitted-1', holdout: 0.5, seed: 4, alpha: 0.2 },
      onProgress: (p) => progress.push(p),
    });
    const fit = report.fit!;
    expect(fit.profile.id).toBe('fitted-1');
    expect(fit.profile.model).toBe(MODEL);
    expect(fit.profile.calibrate).toBe(false);
    expect(fit.holdout_items).toHaveLength(40);
    expect([...fit.fit_items, ...fit.holdout_items].sort((a, b) => a - b)).toEqual(rows.map((_, i) => i));
    // The rerun sent exactly the held-out items, with the profile inline and the prediction set asked.
    const rerun = calls.slice(n);
    expect(rerun.map((c) => itemOf(c.state as string))).toEqual(fit.holdout_items);
    expect(rerun.every((c) => c.calibration === fit.profile && c.prediction_set?.alpha === 0.2)).toBe(true);
    // Only the labelled questions go with the profile (it has no entry for the others).
    expect(rerun.every((c) => Object.keys(c.questions as object).join() === 'q,n')).toBe(true);
    expect(calls.slice(0, n).every((c) => Object.keys(c.questions as object).join() === 'q,n,extra')).toBe(true);
    expect(Object.values(fit.profile.questions).map((e) => e.key)).toEqual(['q', 'n']);
    expect(report.modes.map((m) => m.errors)).toEqual([[], []]);
    expect(progress.at(-1)).toEqual({ done: 120, total: 120, mode: 1, modes: 2 });

    const mode = report.modes[1]!;
    expect([mode.profile, mode.held_out, mode.alpha, mode.calibrate]).toEqual(['fitted-1', true, 0.2, false]);
    // Offline: the table's observations of the held-out items, through applyProfile.
    const held = new Set(fit.holdout_items);
    const offline = (key: 'q' | 'n') => {
      const observations: Observation[] = rows.flatMap((r, i) =>
        held.has(i)
          ? [{ item: i, key, type: key === 'q' ? 'choice' : 'noul', answers: key === 'q' ? ['a', 'b', 'c'] : ['true', 'false'], probabilities: r[key], expected: key === 'q' ? r.labelQ : r.labelN ? 0 : 1, answerMass: 0.5, latencyMs: 0 }]
          : [],
      );
      const applied = applyProfile(observations, fit.profile, { q: CHOICE, n: NOUL }, 0.2);
      // The report's coverage is out of sample: 2-fold cross-conformal, in the rerun's order.
      const byItem = new Map(applied.observations.map((o) => [o.item, o]));
      const inRerunOrder = fit.holdout_items.map((item) => byItem.get(item)!);
      return questionMetrics(inRerunOrder, { alpha: 0.2, sets: crossFoldSets(inRerunOrder, 0.2), crossFold: true });
    };
    for (const [i, key] of (['q', 'n'] as const).entries()) {
      const engine = mode.questions[i]!;
      const expected = offline(key);
      expect(engine.key).toBe(key);
      expect(engine.items).toBe(40);
      for (const metric of ['accuracy', 'brier', 'log_loss', 'ece'] as const) expect(Math.abs(engine[metric] - expected[metric])).toBeLessThanOrEqual(1e-12);
      expect(engine.prediction_sets!.coverage).toBe(expected.prediction_sets!.coverage);
      expect(engine.prediction_sets!.mean_size).toBe(expected.prediction_sets!.mean_size);
      // The profile's own held-out "after" is the same computation, without prediction sets.
      const entry = Object.values(fit.profile.questions).find((q) => q.key === key)!;
      expect(Math.abs(entry.holdout!.ece_after - engine.ece)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(entry.holdout!.log_loss_after - engine.log_loss)).toBeLessThanOrEqual(1e-12);
    }
    // The fit did something: the overconfident choice answers were softened (T > 1) and got better.
    const q = Object.values(fit.profile.questions).find((e) => e.key === 'q')!;
    expect(q.fit.method).toBe('temperature');
    expect((q.fit as { temperature: number }).temperature).toBeGreaterThan(1);
    expect(Object.values(fit.profile.questions).find((e) => e.key === 'n')!.fit.method).toBe('platt');
  });
});
