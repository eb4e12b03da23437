/**
 * The bench worker's decision workloads: a state of an exact token length and the question pool,
 * asked through Engine.decide and the naive way (one full-prompt pass per question), on the
 * loaded model (loaded-model.ts). Timed with performance.now() here, in the worker.
 */
import type { Tensor } from '@huggingface/transformers';
import type { Question } from '../../src/contract/index.ts';
import { promptFrame, questionBlock } from '../../src/engine/decision/decision-prompt.ts';
import { planQuestion } from '../../src/engine/decision/question-plan.ts';
import { floatsOf } from '../../src/engine/runtime/float16.ts';
import { call, need, needEngine } from './loaded-model.ts';
import { meters } from './meters.ts';
import { proseOfTokens, questionPool } from './texts.ts';

interface DecisionSetup {
  state: string;
  questions: Question[];
  /** Per question: the text the naive way feeds after the state, and the first token of each label. */
  naive: { text: string; labelTokens: number[]; labelAnswers: string[]; answers: string[]; sameContext: boolean }[];
  prefixText: string;
  addSpecialTokens: boolean;
}
const setups = new Map<string, DecisionSetup>();

export const decisionWorkloads = {
  /** Builds a state of exactly `stateTokens` tokens and the question pool; reports token counts. */
  setupDecisions(key: string, stateTokens: number, seed: number) {
    const m = need();
    const state = proseOfTokens(m.tokenizer, stateTokens, seed);
    const questions = questionPool();
    const frame = promptFrame(m, state.text);
    const prefixIds = m.encode(frame.prefix, frame.addSpecialTokens);
    let rows = 0;
    const naive = questions.map((q) => {
      const plan = planQuestion(m, frame, q);
      rows += plan.scoring.rows.length;
      const block = questionBlock(q);
      // What a transformers.js user feeds: the whole prompt as one string, up to where the answer starts.
      const text = frame.prefix + block.text + frame.tail;
      const ids = m.encode(text, frame.addSpecialTokens);
      const expected = [...prefixIds, ...plan.promptIds];
      const sameContext = ids.length === expected.length && ids.every((t, i) => t === expected[i]);
      return {
        text,
        labelTokens: plan.paths.map((p) => p[0]!),
        labelAnswers: plan.labels.map((l) => l.answer),
        answers: plan.answers,
        sameContext,
      };
    });
    setups.set(key, { state: state.text, questions, naive, prefixText: frame.prefix, addSpecialTokens: frame.addSpecialTokens });
    const firstTokensDistinct = naive.every((n) => new Set(n.labelTokens).size === n.labelTokens.length);
    return {
      stateTokens: state.tokens,
      prefixTokens: prefixIds.length,
      questionTokens: naive.map((n) => m.encode(n.text, setups.get(key)!.addSpecialTokens).length - prefixIds.length),
      rows,
      firstTokensDistinct,
      sameContext: naive.filter((n) => n.sameContext).length,
    };
  },

  /**
   * One decision request of `q` questions of the pool (from `from` on), through Engine.decide
   * (validation included). The prefix cache is cleared first, so that the request runs from cold,
   * unless `keep` (the prefix-cache rows measure a request that finds its state cached).
   */
  async engineDecision(key: string, q: number, options: { keep?: boolean; from?: number } = {}) {
    const m = need();
    const engine = needEngine();
    const s = setups.get(key)!;
    const questions: Record<string, Question> = {};
    const from = options.from ?? 0;
    s.questions.slice(from, from + q).forEach((question, i) => (questions[`q${from + i}`] = question));
    if (!options.keep) await engine.clearCache();
    const cached0 = (await engine.status()).prefixCache.cachedTokens;
    const fed0 = m.tokensFed;
    const calls0 = m.forwardCalls;
    const f0 = meters.forwardMs;
    const passTrace: [number, number, number][] = [];
    meters.trace = passTrace;
    const t0 = performance.now();
    const res = await engine.decide({ model: 'jev', state: s.state, questions }, call()).finally(() => (meters.trace = null));
    const ms = performance.now() - t0;
    const forward_ms = meters.forwardMs - f0;
    const probs = Object.values(res.answers).map((a) =>
      a.type === 'noul' ? { true: a.noul, false: 1 - a.noul } : (a.probabilities as Record<string, number>),
    );
    const tokens = m.tokensFed - fed0;
    const passes = m.forwardCalls - calls0;
    const cached_tokens = (await engine.status()).prefixCache.cachedTokens - cached0;
    return { ms, forward_ms, tokens, passes, cached_tokens, probs, trace: passTrace };
  },

  /**
   * The naive way, one question: tokenize state + question as one prompt, run the model on it
   * (`await model(inputs)`), read the last position's logits, softmax, sum the label tokens.
   * A request of Q questions is Q such passes in a row; nothing is kept between them, so the
   * runner times each pass on its own (and reads the CPU time the browser got for it).
   */
  async naivePass(key: string, index: number) {
    const m = need();
    const s = setups.get(key)!;
    const n = s.naive[index]!;
    const t0 = performance.now();
    const inputs = m.tokenizer(n.text, { add_special_tokens: s.addSpecialTokens }) as unknown as Record<string, Tensor>;
    const tokens = inputs['input_ids']!.dims.at(-1)!;
    const out = (await m.model(inputs)) as unknown as { logits: Tensor };
    const [, len, vocab] = out.logits.dims as [number, number, number];
    // floatsOf: fp16 and q4f16 logits are float16 data, never to be read as float32.
    const row = floatsOf(out.logits, (len - 1) * vocab, vocab);
    let max = -Infinity;
    for (let i = 0; i < vocab; i++) if (row[i]! > max) max = row[i]!;
    let z = 0;
    for (let i = 0; i < vocab; i++) z += Math.exp(row[i]! - max);
    const mass: Record<string, number> = {};
    for (const a of n.answers) mass[a] = 0;
    n.labelTokens.forEach((t, i) => (mass[n.labelAnswers[i]!]! += Math.exp(row[t]! - max) / z));
    const total = Object.values(mass).reduce((a, b) => a + b, 0);
    for (const a of n.answers) mass[a]! /= total;
    return { ms: performance.now() - t0, tokens, probs: mass, sameContext: n.sameContext };
  },
};
