// The bound on all-position logits (LanguageModel.logitsBudgetBytes): on a model with Qwen's
// 151,936-token vocabulary (generated, tiny width), a 512-token state is fed in passes whose
// logits fit the budget, and answers as the unbounded single pass does. Every logits tensor the
// model returns is observed at the model's forward.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Question } from '../../src/contract/index.ts';
import { promptFrame } from '../../src/engine/decision/decision-prompt.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { LOGITS_BUDGET_BYTES, type LanguageModel } from '../../src/engine/model/language-model.ts';
import { outcomeDiff } from '../reliability/workload.ts';
import { GENERATED, loadEngine } from '../support/models.ts';

const MODEL = 'tiny-random-qwen2';
const QUESTIONS: Record<string, Question> = {
  refund: { type: 'noul', instructions: 'Does the customer ask for a refund?', criteria: { true: 'yes', false: 'no' } },
  topic: { type: 'choice', instructions: 'What is it about?', criteria: { billing: null, bug: null, other: null } },
};

/** Every logits tensor's bytes a model returns from now on. */
function watchLogits(lm: LanguageModel): number[] {
  const seen: number[] = [];
  const model = lm.model as unknown as { forward(inputs: unknown): Promise<Record<string, { dims: number[]; type: string }>> };
  const forward = model.forward.bind(model);
  model.forward = async (inputs: unknown) => {
    const out = await forward(inputs);
    const logits = out['logits']!;
    seen.push(logits.dims.reduce((a, b) => a * b, 1) * (logits.type === 'float16' ? 2 : 4));
    return out;
  };
  return seen;
}

describe(`the logits bound on ${MODEL} (vocabulary 151,936)`, () => {
  let bounded: Engine;
  let unbounded: Engine;
  let state: string;
  beforeAll(async () => {
    bounded = await loadEngine(GENERATED, MODEL, 'fp32', { prefixCacheBytes: 0 });
    unbounded = await loadEngine(GENERATED, MODEL, 'fp32', { prefixCacheBytes: 0 });
    unbounded.languageModel!.logitsBudgetBytes = Infinity;
    const lm = bounded.languageModel!;
    // A state of about 512 tokens.
    const words = 'the invoice for March was charged twice and the customer wants the second charge refunded today'.split(' ');
    state = '';
    for (let i = 0; lm.encode(state, false).length < 512; i++) state += `${words[i % words.length]} `;
  });
  afterAll(async () => {
    await bounded?.languageModel?.dispose();
    await unbounded?.languageModel?.dispose();
  });

  it('a 512-token decision never receives more logits than the budget in one pass, and answers as one unbounded pass does', async () => {
    const lm = bounded.languageModel!;
    expect(lm.vocabSize).toBe(151_936);
    const rowBytes = 151_936 * 4;
    expect(lm.passTokens()).toBe(Math.floor(LOGITS_BUDGET_BYTES / rowBytes));
    const frame = promptFrame(lm, state);
    const prefix = lm.encode(frame.prefix, frame.addSpecialTokens).length;
    expect(prefix).toBeGreaterThan(512);

    const seenBounded = watchLogits(lm);
    const seenUnbounded = watchLogits(unbounded.languageModel!);
    const a = await bounded.decide({ model: 'jev', state, questions: QUESTIONS }, { id: 'a' });
    const b = await unbounded.decide({ model: 'jev', state, questions: QUESTIONS }, { id: 'b' });
    expect(Math.max(...seenBounded)).toBeLessThanOrEqual(LOGITS_BUDGET_BYTES);
    // Unbounded, the state pass alone returns every position's logits: over 300 MB.
    expect(Math.max(...seenUnbounded)).toBe(prefix * rowBytes);
    expect(prefix * rowBytes).toBeGreaterThan(300e6);
    expect(seenBounded.length).toBeGreaterThan(seenUnbounded.length);
    expect(outcomeDiff(a.answers, b.answers)).toEqual([]);
    expect(a.usage).toEqual(b.usage);
  });

  it('a long chat prompt is bounded the same way; the greedy reply is the same', async () => {
    const seen = watchLogits(bounded.languageModel!);
    const body = { model: 'jev', messages: [{ role: 'user', content: state }], temperature: 0, max_tokens: 4, logprobs: true };
    const a = await bounded.chat(body, { id: 'c' });
    const b = await unbounded.chat(body, { id: 'd' });
    expect(Math.max(...seen)).toBeLessThanOrEqual(LOGITS_BUDGET_BYTES);
    expect(a.choices[0]!.message).toEqual(b.choices[0]!.message);
    expect(outcomeDiff(a.choices[0]!.logprobs, b.choices[0]!.logprobs, 1e-5)).toEqual([]);
  });
});
