// The evaluation against a real engine (onnxruntime-node, the generated tiny model and
// TinyStories-656K), on questions no model here answers well: labels drawn from the model's OWN
// answer distribution make it perfectly calibrated by construction, so the ECE must be near 0 and
// the fitted temperature (and Platt's a, b) near the identity, within bounds the test computes
// from the data. Then a whole run with a fit: the engine's own code applying the fitted profile
// gives what applyProfile computes offline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plattStandardErrors } from '../support/platt-fisher.ts';
import type { DecisionRequestInput, DecisionResponse, Question } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import {
  applyProfile,
  expectedCalibrationError,
  fitPlatt,
  fitTemperature,
  observe,
  questionMetrics,
  runEvaluation,
  type EvalItem,
  type Observation,
} from '../../src/evaluation/index.ts';
import { Xoshiro128 } from '../../scripts/models/prng.ts';
import { crossFoldSets } from '../../src/evaluation/evaluate.ts';
import { localClient } from '../support/local-client.ts';
import { testModels } from '../support/models.ts';

const QUESTIONS: Record<string, Question> = {
  topic: {
    type: 'choice',
    instructions: 'What is the message about?',
    criteria: { billing: 'Money, invoices, refunds', shipping: 'Parcels and delivery', account: 'Logins and passwords', other: null },
  },
  upset: { type: 'noul', instructions: 'Is the writer upset?', criteria: { true: 'The writer is angry or sad', false: 'The writer is calm' } },
};

/** 168 different states, deterministically: every combination of the fragments, in a mixed order. */
function states(): string[] {
  const who = ['My parcel', 'The invoice', 'My password', 'The little dog', 'Our order', 'The refund', 'My account'];
  const what = ['arrived late again', 'was charged twice', 'stopped working today', 'is lost somewhere', 'looks fine now', 'made me very happy'];
  const how = ['and I am furious.', 'so please help.', 'thank you!', 'what should I do?'];
  const out: string[] = [];
  who.forEach((a) => what.forEach((b) => how.forEach((c) => out.push(`${a} ${b}, ${c}`))));
  // Interleave so that any prefix of the list is varied.
  return out.map((_, i) => out[(i * 97) % out.length]!);
}

/** The categorical draw of one uniform. */
function draw(p: readonly number[], u: number): number {
  let c = 0;
  for (let i = 0; i < p.length; i++) if (u < (c += p[i]!)) return i;
  return p.length - 1;
}

/**
 * The bound on the ECE of a perfectly calibrated model: in bin b, acc_b − conf_b has mean 0 and
 * variance Σᵢ pᵢ(1 − pᵢ)/n_b² ≤ conf_b(1 − conf_b)/n_b (p(1 − p) is concave), so
 * E|acc_b − conf_b| ≤ √(conf_b(1 − conf_b)/n_b) and E[ECE] ≤ Σ_b (n_b/n)·√(conf_b(1 − conf_b)/n_b).
 * Bins computed here, from the top probabilities, independently of metrics.ts.
 */
function eceBound(observations: readonly Observation[]): number {
  const bins = new Map<number, number[]>();
  for (const o of observations) {
    const top = Math.max(...o.probabilities);
    const b = Math.min(9, Math.floor(top * 10 + 1e-12));
    bins.set(b, [...(bins.get(b) ?? []), top]);
  }
  let bound = 0;
  for (const tops of bins.values()) {
    const conf = tops.reduce((a, b) => a + b, 0) / tops.length;
    bound += (tops.length / observations.length) * Math.sqrt((conf * (1 - conf)) / tops.length);
  }
  return bound;
}

for (const m of testModels()) {
  describe.skipIf(!m.present)(`labels drawn from ${m.id}'s own answers`, () => {
    let client: JevClient;
    const items: EvalItem[] = [];
    const responses: DecisionResponse[] = [];
    beforeAll(async () => {
      ({ client } = await localClient(m.root, m.id));
      const rng = new Xoshiro128(m.id.length * 7919);
      for (const [i, state] of states().entries()) {
        const request: DecisionRequestInput = { model: 'jev', state, questions: QUESTIONS, include: ['answer_mass'] };
        const response = await client.decisions.create(request);
        const topic = response.answers['topic']!;
        const upset = response.answers['upset']!;
        if (topic.type !== 'choice' || upset.type !== 'noul') throw new Error('unexpected answer types');
        const keys = Object.keys(topic.probabilities);
        // The labels: one draw from the engine's own probabilities per question.
        const labels = { topic: keys[draw(keys.map((k) => topic.probabilities[k]!), rng.nextFloat())]!, upset: rng.nextFloat() < upset.noul };
        items.push({ line: i + 1, id: null, request, labels });
        responses.push(response);
      }
    });
    afterAll(() => client?.terminate());

    const observations = (key: string) => items.flatMap((item, i) => observe(item, i, responses[i]!, 0)).filter((o) => o.key === key);

    it('reports the answer mass', () => {
      const mass = observations('topic').map((o) => o.answerMass!);
      expect(mass.every((x) => x > 0 && x <= 1)).toBe(true);
    });

    it('ECE within 3× the bound on its expectation under perfect calibration', () => {
      for (const key of ['topic', 'upset']) {
        const obs = observations(key);
        expect(obs).toHaveLength(168);
        const ece = expectedCalibrationError(obs);
        const bound = eceBound(obs);
        console.log(`${m.id} ${key}: ECE ${ece.toFixed(4)}, bound 3 × ${bound.toFixed(4)}`);
        expect(ece).toBeLessThanOrEqual(3 * bound);
      }
    });

    it('fitted temperature within 1 ± 3·SE (Fisher information at T = 1)', () => {
      const obs = observations('topic');
      const t = fitTemperature(obs);
      // At β = 1 an item's information is the variance of ℓ = log p under p itself.
      const info =
        obs.reduce((s, o) => {
          const l = o.probabilities.map((p) => Math.log(p));
          const m1 = o.probabilities.reduce((a, p, k) => a + p * l[k]!, 0);
          const m2 = o.probabilities.reduce((a, p, k) => a + p * l[k]! * l[k]!, 0);
          return s + (m2 - m1 * m1);
        }, 0) / obs.length;
      const se = 1 / Math.sqrt(obs.length * info); // SE(β̂); SE(T̂) = SE(β̂)/β² = SE(β̂) at β = 1
      console.log(`${m.id} topic: T ${t.toFixed(4)}, SE ${se.toFixed(4)}`);
      expect(Math.abs(t - 1)).toBeLessThanOrEqual(3 * se);
      // The Wald bound is loose where the answers are nearly certain (TinyStories: the labels then
      // never contradict the top answer and T runs to its bound); the likelihood-ratio test holds
      // there too: 2n·(L(1) − L(T̂)) ≤ 9, the χ²₁ quantile of the 3σ level (P ≈ 0.0027). L computed here.
      const nll = (temperature: number) =>
        obs.reduce((s, o) => {
          const w = o.probabilities.map((p) => p ** (1 / temperature));
          return s - Math.log(w[o.expected]! / w.reduce((a, b) => a + b, 0));
        }, 0);
      expect(2 * (nll(1) - nll(t))).toBeLessThanOrEqual(9);
      expect(nll(t)).toBeLessThanOrEqual(nll(1) + 1e-9); // the fit is at least as good as T = 1
    });

    it("Platt's a, b within 3 SE of the identity (1, 0)", () => {
      const obs = observations('upset');
      const { a, b } = fitPlatt(obs);
      // 3 standard errors from the Fisher information at the identity (1, 0), on the clipped logits.
      const logits = obs.map((o) => {
        const p = Math.min(1 - 1e-12, Math.max(1e-12, o.probabilities[0]!));
        return Math.log(p / (1 - p));
      });
      const { seA, seB } = plattStandardErrors(logits, 1, 0);
      console.log(`${m.id} upset: a ${a.toFixed(3)} ± ${seA.toFixed(3)}, b ${b.toFixed(3)} ± ${seB.toFixed(3)}`);
      expect(Math.abs(a - 1)).toBeLessThanOrEqual(3 * seA);
      expect(Math.abs(b)).toBeLessThanOrEqual(3 * seB);
      // Likelihood ratio against the identity: 2n·(L(1, 0) − L(â, b̂)) ≤ 11.8, the χ²₂ quantile of P = 0.0027.
      const nll = (a: number, b: number) =>
        obs.reduce((s, o) => {
          const p = o.probabilities[0]!;
          const q = 1 / (1 + Math.exp(-(a * Math.log(p / (1 - p)) + b)));
          return s - Math.log(o.expected === 0 ? q : 1 - q);
        }, 0);
      expect(2 * (nll(1, 0) - nll(a, b))).toBeLessThanOrEqual(11.8);
    });

    it('a run with a fit: the engine applying the profile matches applyProfile offline', async () => {
      const set = items.slice(0, 40).map((item) => ({ ...item, request: { model: 'jev', state: item.request.state, questions: QUESTIONS } }));
      const sent: { request: DecisionRequestInput; response: DecisionResponse }[] = [];
      const report = await runEvaluation({
        items: set,
        dataName: 'own-labels',
        decide: async (request, options) => {
          const response = await client.decisions.create(request, options);
          sent.push({ request, response });
          return response;
        },
        modes: [{ calibrate: false }],
        fit: { id: 'own', holdout: 0.5, seed: 3, alpha: 0.2 },
      });
      const fit = report.fit!;
      expect(fit.profile.model).toBe(responses[0]!.model);
      const mode = report.modes[1]!;
      expect(mode.errors).toEqual([]);
      expect(mode.held_out).toBe(true);
      const held = new Set(fit.holdout_items);
      for (const q of mode.questions) {
        const base = sent.slice(0, 40).flatMap(({ response }, i) => (held.has(i) ? observe(set[i]!, i, response, 0) : [])).filter((o) => o.key === q.key);
        const applied = applyProfile(base, fit.profile, QUESTIONS, 0.2);
        // The engine's sets are the offline sets of the same profile, item by item.
        const appliedOf = new Map(applied.observations.map((o, j) => [o.item, { o, set: applied.sets![j]! }]));
        fit.holdout_items.forEach((item, j) => {
          const { o, set: offlineSet } = appliedOf.get(item)!;
          const engineSet = sent[40 + j]!.response.answers[q.key]!.prediction_set!;
          expect([...engineSet].sort()).toEqual(offlineSet.map((i) => o.answers[i]!).sort());
        });
        // The report's coverage is out of sample: 2-fold cross-conformal over the rerun's order.
        const inRerunOrder = fit.holdout_items.map((item) => appliedOf.get(item)!.o);
        const offline = questionMetrics(inRerunOrder, { alpha: 0.2, sets: crossFoldSets(inRerunOrder, 0.2), crossFold: true });
        for (const metric of ['accuracy', 'brier', 'log_loss', 'ece'] as const) expect(Math.abs(q[metric] - offline[metric])).toBeLessThanOrEqual(1e-12);
        expect(q.prediction_sets).toEqual(offline.prediction_sets);
      }
    });
  });
}
