/**
 * Exact decisions on every model family's real tokenizer: the engine's label probabilities equal
 * a reference computed by full forward passes over the whole prompt text tokenized at once
 * (test/support/full-prompt.ts renders it independently, test/support/reference.ts scores it),
 * for labels that stress tokenization: a label that is a prefix of another ("bill", "billing"),
 * a leading space, non-ASCII, a key ending in punctuation, noul's true/True, and 11 grades
 * ("1" is a prefix of "10"). SentencePiece tokenizers (Phi-3, Gemma, TinyStories) put a `▁` in
 * front of a label or a piece of text; byte-level BPE (Qwen, Llama 3, SmolLM2) merges a label
 * with the text before it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Question } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { fullPrompt, splitAtDivergence } from '../support/full-prompt.ts';
import { GENERATED, loadEngine, testModels } from '../support/models.ts';
import { referenceAnswerProbabilities } from '../support/reference.ts';

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];
const MODELS = [
  ...testModels(),
  ...FAMILIES.map((id) => ({ id, root: GENERATED, present: existsSync(join(GENERATED, id, 'onnx', 'model.onnx')) })),
];

const STATE = 'Ticket #4512: "I was charged twice for my plan." The customer wants a refund.';
const QUESTIONS: Record<string, Question> = {
  refund: { type: 'noul', instructions: 'Does the customer want a refund?', criteria: { true: null, false: null } },
  team: {
    type: 'choice',
    instructions: 'Which team should handle it?',
    criteria: { billing: 'Invoices and charges', bill: null, ' space': 'A key with a leading space', '日本語': 'Japanese', 'done.': 'Ends in punctuation', 'tech-support': null },
  },
  urgency: { type: 'score', instructions: 'How urgent is it?', criteria: Array.from({ length: 11 }, (_, i) => `level ${i}`) },
};

let callNo = 0;

for (const m of MODELS) {
  describe(`exact decisions on ${m.id}`, () => {
    let engine: Engine;
    let lm: LanguageModel;
    beforeAll(async () => {
      // `npm test` generates every family model first (npm run models); nothing here is optional.
      if (!m.present) throw new Error(`${m.id} is not at ${m.root}: run \`npm run models\``);
      engine = await loadEngine(m.root, m.id);
      lm = engine.languageModel!;
    });
    afterAll(async () => {
      await lm?.dispose();
    });

    for (const [key, question] of Object.entries(QUESTIONS)) {
      it(`${key} (${question.type}): the engine's probabilities equal the full-prompt reference within 1e-5`, async () => {
        const res = await engine.decide({ model: 'jev', state: STATE, questions: { [key]: question }, include: ['answer_mass', 'prompt'] }, { id: `f${++callNo}` });
        const answer = res.answers[key]!;
        const full = fullPrompt(lm, STATE, question);
        const { context, paths } = splitAtDivergence(full.labels);
        const ref = await referenceAnswerProbabilities(lm, context, paths);
        const probs: Record<string, number> = answer.type === 'noul' ? { true: answer.noul, false: 1 - answer.noul } : answer.probabilities;
        expect(Object.keys(probs).sort()).toEqual([...ref.answers].sort());
        ref.answers.forEach((a, i) => expect(Math.abs(probs[a]! - ref.probabilities[i]!), `answer ${JSON.stringify(a)}`).toBeLessThan(1e-5));
        expect(Math.abs(answer.answer_mass! - Math.min(1, ref.coverage)) / ref.coverage).toBeLessThan(1e-4);
        // The engine fed the same tokens as the whole text's tokenization (its prompt + each label path).
        const fed = full.labels[0]!.ids.slice(0, -answer.prompt!.label_token_ids[full.labels[0]!.answer]![0]!.length);
        expect(answer.prompt!.text).toBe(lm.tokenizer.decode(fed, { skip_special_tokens: false, clean_up_tokenization_spaces: false }));
      });
    }
  });
}

describe('a thinking model (tiny-random-qwen3)', () => {
  it('decides with thinking off: the prompt ends in an empty think block', async () => {
    const m = MODELS.find((x) => x.id === 'tiny-random-qwen3')!;
    if (!m.present) throw new Error(`${m.id} is not at ${m.root}: run \`npm run models\``);
    const engine = await loadEngine(m.root, m.id);
    try {
      const res = await engine.decide({ model: 'jev', state: STATE, questions: { refund: QUESTIONS['refund']! }, include: ['prompt'] }, { id: `f${++callNo}` });
      expect(res.answers['refund']!.prompt!.text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    } finally {
      await engine.languageModel?.dispose();
    }
  });
});

describe('a template that writes the date (tiny-random-llama3)', () => {
  it('gets a fixed date in a decision prompt, so the probabilities do not change from day to day', async () => {
    const m = MODELS.find((x) => x.id === 'tiny-random-llama3')!;
    if (!m.present) throw new Error(`${m.id} is not at ${m.root}: run \`npm run models\``);
    const engine = await loadEngine(m.root, m.id);
    try {
      const res = await engine.decide({ model: 'jev', state: STATE, questions: { refund: QUESTIONS['refund']! }, include: ['prompt'] }, { id: `f${++callNo}` });
      expect(res.answers['refund']!.prompt!.text).toContain('Today Date: 26 Jul 2024\n');
    } finally {
      await engine.languageModel?.dispose();
    }
  });
});
