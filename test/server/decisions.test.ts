/**
 * Decisions through the server (src/server/) in front of a loopback SGLang or vLLM equal the
 * in-process engine's on the same weights: every question type, multi-token labels (keys sharing
 * tokens, one key a prefix of another, "1" and "10"), calibration, on tiny-random-llama and the
 * generated families; questions in another order, and concurrent requests, answer the same; one
 * decision is one backend request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DecisionResponse, Question } from '../../src/contract/index.ts';
import type { BackendKind } from '../../src/server/cli-args.ts';
import { GENERATED, TINY } from '../support/models.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { call, post, served, type Served } from './support/served.ts';

const TOL = 1e-4;
const PATH = '/inference/jev/api/alpha/decisions';
const STATE = 'I was charged twice for the same order. Please refund the duplicate charge, I am quite annoyed.';

const QUESTIONS: Record<string, Question> = {
  refund: { type: 'noul', instructions: 'Is the customer asking for money back?', criteria: { true: 'A refund is asked for', false: 'No refund' } },
  team: {
    type: 'choice',
    instructions: 'Which team should take it?',
    // Multi-token keys, keys sharing their first tokens, one key a prefix of another, non-ASCII.
    criteria: { bill: null, billing: 'Charges and refunds', 'billing and payments team': 'A long key', support: 'Anything else', café: null },
  },
  anger: { type: 'score', instructions: 'How angry is the customer, 0 to 10?', criteria: Array.from({ length: 11 }, (_, i) => `level ${i}`) },
};

function expectSame(a: DecisionResponse, b: DecisionResponse): void {
  expect(Object.keys(b.answers).sort()).toEqual(Object.keys(a.answers).sort());
  for (const [key, x] of Object.entries(a.answers)) {
    const y = b.answers[key]!;
    expect(y.type).toBe(x.type);
    if (x.type === 'noul' && y.type === 'noul') expect(Math.abs(y.noul - x.noul)).toBeLessThan(TOL);
    if ('probabilities' in x && 'probabilities' in y) {
      for (const [k, p] of Object.entries(x.probabilities)) expect(Math.abs((y.probabilities as Record<string, number>)[k]! - p), `${key}.${k}`).toBeLessThan(TOL);
      expect(Math.abs(y.confidence - x.confidence)).toBeLessThan(TOL);
    }
    if (x.type === 'choice' && y.type === 'choice') expect(y.choice).toBe(x.choice);
    if (x.type === 'score' && y.type === 'score') expect(Math.abs(y.score - x.score)).toBeLessThan(TOL * 10);
  }
}

const present = (id: string) => existsSync(join(GENERATED, id, 'onnx', 'model.onnx'));

/** The whole set on tiny-random-llama, on both engines. */
const FULL: BackendKind[] = ['sglang', 'vllm'];
/**
 * The families with their real tokenizers and templates, on SGLang, with a short state: their
 * vocabularies (32k–262k) make every pass of the in-process reference and of the loopback cost
 * its rows times the vocabulary in onnxruntime-node (no logits-to-keep outside the browser), so
 * by default two run (Qwen3: byte-level BPE and a thinking template; Phi-3.5: SentencePiece), and
 * all five with JEV_SERVER_FAMILIES=all (about a minute more of CPU).
 */
const FAMILIES =
  process.env['JEV_SERVER_FAMILIES'] === 'all'
    ? ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3']
    : ['tiny-random-qwen3', 'tiny-random-phi3'];
const FAMILY_QUESTIONS: Record<string, Question> = {
  refund: { type: 'noul', instructions: 'Refund asked?', criteria: { true: null, false: null } },
  team: { type: 'choice', instructions: 'Team?', criteria: { bill: null, billing: null, 'billing and payments': null, café: null } },
  anger: { type: 'score', instructions: 'Anger?', criteria: Array.from({ length: 11 }, (_, i) => String(i)) },
};

async function decideBoth(s: Served, body: Record<string, unknown>) {
  const reference = await s.model.engine.decide(body, call());
  const before = s.server.backend.requests;
  const res = await post(s.server, PATH, body);
  expect(res.status, await res.clone().text()).toBe(200);
  const answer = (await res.json()) as DecisionResponse;
  return { reference, answer, requests: s.server.backend.requests - before };
}

for (const kind of FULL) {
  describe.skipIf(!present(TINY))(`decisions through the server on ${kind}, ${TINY}`, () => {
    let s: Served;
    beforeAll(async () => {
      // Four decisions at once wait on one loopback model, computed on this CPU: a loaded machine can
      // take longer than serveOptions' 10 s --timeout-ms (then a 504, which faults.test.ts tests).
      s = await served(kind, TINY, { timeoutMs: 120_000 });
    });
    afterAll(async () => s?.close());

    it('answers noul, choice (multi-token keys) and score (0–10) as the in-process engine, within 1e-4, in one backend request', async () => {
      const { reference, answer, requests } = await decideBoth(s, { model: 'jev', state: STATE, questions: QUESTIONS });
      expectSame(reference, answer);
      expect(answer.usage).toEqual(reference.usage);
      expect(answer.model).toBe(`${kind}/jev-${TINY}-20261122`);
      expect(answer.provider).toBe(kind);
      expect(requests).toBe(1);
    });

    it('answers the same with the questions in another order, and with calibrate and the prompt included', async () => {
      const reversed = Object.fromEntries(Object.entries(QUESTIONS).reverse());
      const { reference, answer } = await decideBoth(s, { model: 'jev', state: STATE, questions: reversed, calibrate: true, include: ['prompt'] });
      expectSame(reference, answer);
      for (const key of Object.keys(QUESTIONS)) expect(answer.answers[key]!.prompt).toEqual(reference.answers[key]!.prompt);
      const plain = (await (await post(s.server, PATH, { model: 'jev', state: STATE, questions: QUESTIONS })).json()) as DecisionResponse;
      const again = (await (await post(s.server, PATH, { model: 'jev', state: STATE, questions: reversed })).json()) as DecisionResponse;
      expectSame(plain, again);
    });

    it('answers concurrent decisions each as it answers them one at a time', async () => {
      const bodies = ['The parcel never came.', 'Thanks, all good!', STATE, 'Cancel my plan now.'].map((state) => ({ model: 'jev', state, questions: QUESTIONS }));
      const alone: DecisionResponse[] = [];
      for (const b of bodies) alone.push((await (await post(s.server, PATH, b)).json()) as DecisionResponse);
      const before = s.server.backend.requests;
      const together = await Promise.all(
        bodies.map(async (b) => {
          const res = await post(s.server, PATH, b);
          expect(res.status, await res.clone().text()).toBe(200);
          return (await res.json()) as DecisionResponse;
        }),
      );
      together.forEach((t, i) => expectSame(alone[i]!, t));
      expect(s.server.backend.requests - before).toBe(bodies.length);
    });
  });
}

for (const id of FAMILIES) {
  describe.skipIf(!present(id))(`decisions through the server on sglang, ${id}`, () => {
    let s: Served;
    beforeAll(async () => {
      s = await served('sglang', id);
    });
    afterAll(async () => s?.close());

    it('answers as the in-process engine on the same weights, with the real tokenizer and template, within 1e-4', async () => {
      const { reference, answer, requests } = await decideBoth(s, { model: 'jev', state: 'Charged twice, refund me.', questions: FAMILY_QUESTIONS, include: ['prompt'] });
      expectSame(reference, answer);
      for (const key of Object.keys(FAMILY_QUESTIONS)) expect(answer.answers[key]!.prompt).toEqual(reference.answers[key]!.prompt);
      expect(requests).toBe(1);
    });
  });
}
