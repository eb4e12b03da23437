/**
 * `include: ["prompt"]` through the facade (in-process engine): each answer carries the text the
 * model read and its label token ids. Checked against an independent rendering and tokenization
 * of the whole prompt (test/support/full-prompt.ts): re-tokenizing the text gives the ids fed,
 * the ids fed plus each label path are the whole text's own tokenization, and asking for the
 * prompt changes no probability. Without the field the answers keep exactly the specification's keys.
 * (Labels here are text both tokenizers can write: a character TinyStories maps to `<unk>` cannot
 * come back from decoded text; test/engine/decision-families.test.ts covers such labels.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decisionResponseSchema, type Answer, type Question } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { fullPrompt } from '../support/full-prompt.ts';
import { localClient } from '../support/local-client.ts';
import { testModels } from '../support/models.ts';

const STATE = 'Once upon a time, a little dog named Max lost his red ball in the big park. He was very sad.';
const QUESTIONS: Record<string, Question> = {
  sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: 'The dog feels sad', false: null } },
  team: { type: 'choice', instructions: 'Which team?', criteria: { billing: 'Invoices', bill: null, ' space': null, 'x y z': null, 'done.': null } },
  rate: { type: 'score', instructions: 'Rate it.', criteria: Array.from({ length: 11 }, (_, i) => `grade ${i}`) },
};
const SPEC_KEYS = { noul: ['noul', 'type'], choice: ['choice', 'confidence', 'probabilities', 'type'], score: ['confidence', 'legend', 'probabilities', 'score', 'type'] };
const body = (include?: string[]) => ({ model: 'jev', state: STATE, questions: QUESTIONS, ...(include ? { include } : {}) });
const probsOf = (a: Answer) => (a.type === 'noul' ? { true: a.noul } : a.probabilities);

for (const m of testModels()) {
  describe.skipIf(!m.present)(`include prompt on ${m.id}`, () => {
    let client: JevClient;
    let engine: Engine;
    let lm: LanguageModel;
    beforeAll(async () => {
      ({ client, engine } = await localClient(m.root, m.id));
      lm = engine.languageModel!;
    });
    afterAll(async () => {
      await lm?.dispose();
    });

    it('without the field the answers have exactly the specification keys; with it, only `prompt` more, and the same probabilities', async () => {
      const plain = await client.decisions.create(body());
      const withPrompt = await client.decisions.create(body(['prompt']));
      expect(() => decisionResponseSchema.parse(withPrompt)).not.toThrow();
      for (const [key, a] of Object.entries(plain.answers)) {
        expect(Object.keys(a).sort(), key).toEqual(SPEC_KEYS[a.type]);
        const b = withPrompt.answers[key]!;
        expect(Object.keys(b).sort(), key).toEqual([...SPEC_KEYS[a.type], 'prompt'].sort());
        const { prompt: _omit, ...rest } = b;
        expect(rest, key).toEqual(a);
        expect(probsOf(b)).toEqual(probsOf(a));
      }
      expect(withPrompt.usage).toEqual(plain.usage);
    });

    it('the text re-tokenizes to the ids fed, and ids fed + each label path are the whole text tokenized at once', async () => {
      const res = await client.decisions.create(body(['prompt', 'answer_mass']));
      const unk = (lm.tokenizer as unknown as { unk_token_id?: number }).unk_token_id;
      for (const [key, question] of Object.entries(QUESTIONS)) {
        const prompt = res.answers[key]!.prompt!;
        const full = fullPrompt(lm, STATE, question);
        // The text holds the whole state and question.
        expect(prompt.text, key).toContain(STATE);
        expect(prompt.text, key).toContain(`Question: ${question.instructions}`);
        const seen = new Map<string, number>();
        let fed: number[] | null = null;
        for (const label of full.labels) {
          const n = seen.get(label.answer) ?? 0;
          seen.set(label.answer, n + 1);
          const path = prompt.label_token_ids[label.answer]![n]!;
          expect(path.length).toBeGreaterThan(0);
          // The label path ends the whole text's own tokenization, and what precedes it is the same for every label.
          expect(label.ids.slice(-path.length), `${key}: ${label.surface}`).toEqual(path);
          const before = label.ids.slice(0, -path.length);
          if (fed) expect(before, `${key}: ${label.surface}`).toEqual(fed);
          fed = before;
        }
        // The text is those ids decoded, and tokenizes back to them (exactly, unless a character had no token: <unk> is lossy).
        expect(lm.tokenizer.decode(fed!, { skip_special_tokens: false, clean_up_tokenization_spaces: false }), key).toBe(prompt.text);
        if (unk === undefined || !fed!.includes(unk)) expect(lm.tokenizer.encode(prompt.text, { add_special_tokens: false }), key).toEqual(fed);
        // Every answer is listed, with one path per way of writing it.
        expect(Object.keys(prompt.label_token_ids).sort(), key).toEqual([...seen.keys()].sort());
        for (const [answer, count] of seen) expect(prompt.label_token_ids[answer]!.length).toBe(count);
      }
      // The choice question's text is representable by both tokenizers: it round-trips.
      const team = res.answers['team']!.prompt!;
      const teamIds = fullPrompt(lm, STATE, QUESTIONS.team!).labels[0]!.ids;
      expect(teamIds.slice(0, lm.tokenizer.encode(team.text, { add_special_tokens: false }).length)).toEqual(lm.tokenizer.encode(team.text, { add_special_tokens: false }));
    });

    it('label ids are the tokenizer encoding of the label in context (the label text decodes back from them)', async () => {
      const res = await client.decisions.create(body(['prompt']));
      const team = res.answers['team']!.prompt!;
      for (const key of Object.keys(QUESTIONS.team!.criteria as Record<string, unknown>)) {
        const [path] = team.label_token_ids[key]!;
        const ids = lm.tokenizer.encode(team.text, { add_special_tokens: false });
        const whole = lm.tokenizer.decode([...ids, ...path!], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
        const head = lm.tokenizer.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
        expect(whole.startsWith(head), key).toBe(true);
        // What the path adds is the label (some tokenizers put back a space the prompt's end swallowed).
        expect(whole.slice(head.length).trim(), key).toBe(key.trim());
      }
    });
  });
}
