import type { Question } from '../../src/contract/index.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/**
 * Deterministic inputs for the bench: prose of an exact token length, and a fixed pool of
 * questions whose answer labels start with distinct tokens (so that the naive way, which reads
 * one next-token distribution per question, computes the same probabilities as the engine).
 */

const WORDS = (
  'the a little dog cat bird tree house river garden park ball red blue green big small old new ' +
  'happy sad quiet loud morning evening night day sun moon rain wind snow road town city friend ' +
  'mother father girl boy teacher school book story letter window door table chair bread milk ' +
  'apple water fire stone hill forest field flower path bridge boat ship train car market shop ' +
  'walked ran looked found lost saw made took gave kept opened closed found said asked told ' +
  'played waited carried painted wrote read sang laughed cried slept woke jumped climbed ' +
  'slowly quickly softly again always never often together alone early late near far under over ' +
  'because when while before after until and but so then also very really almost only just'
).split(' ');


/** Plain sentences of about `words` words. */
export function prose(words: number, seed: number): string {
  const next = seededRandom(seed);
  const out: string[] = [];
  let sentence: string[] = [];
  for (let i = 0; i < words; i++) {
    sentence.push(WORDS[Math.floor(next() * WORDS.length)]!);
    if (sentence.length >= 6 + Math.floor(next() * 8)) {
      const s = sentence.join(' ');
      out.push(s[0]!.toUpperCase() + s.slice(1) + '.');
      sentence = [];
    }
  }
  if (sentence.length) out.push(sentence.join(' ') + '.');
  return out.join(' ');
}

interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
}

/** Prose that encodes (on its own, without special tokens) to exactly `tokens` tokens where possible. */
export function proseOfTokens(tokenizer: Tokenizer, tokens: number, seed: number): { text: string; tokens: number } {
  const count = (t: string) => tokenizer.encode(t, { add_special_tokens: false }).length;
  let words = Math.max(8, tokens);
  let text = prose(words, seed);
  while (count(text) < tokens + 8) {
    words *= 2;
    text = prose(words, seed);
  }
  const ids = tokenizer.encode(text, { add_special_tokens: false });
  let best = { text: '', tokens: 0 };
  for (let n = tokens; n >= Math.max(1, tokens - 8); n--) {
    const cut = tokenizer.decode(ids.slice(0, n), { skip_special_tokens: true }).trim();
    const c = count(cut);
    if (c === tokens) return { text: cut, tokens: c };
    if (c <= tokens && c > best.tokens) best = { text: cut, tokens: c };
  }
  return best;
}

const TOPICS = [
  'the dog', 'the weather', 'the town', 'the teacher', 'the river', 'the garden', 'the market', 'the journey',
  'the children', 'the letter', 'the house', 'the forest', 'the train', 'the story', 'the boat', 'the morning',
];

/** Sixteen questions of the three types, instructions of varied length, labels with distinct first tokens. */
export function questionPool(): Question[] {
  return TOPICS.map((topic, i): Question => {
    const detail = i % 2 === 0 ? '' : ` Think about what the text says about ${topic} and what it leaves out.`;
    switch (i % 3) {
      case 0:
        return {
          type: 'noul',
          instructions: `Does the text mention ${topic} in a positive way?${detail}`,
          criteria: { true: `The text is positive about ${topic}`, false: `It is not` },
        };
      case 1:
        return {
          type: 'choice',
          instructions: `What best describes the role of ${topic} in the text?${detail}`,
          criteria: { main: 'It is the main subject', side: 'It appears on the side', absent: 'It does not appear' },
        };
      default:
        return {
          type: 'score',
          instructions: `How important is ${topic} to the text?${detail}`,
          criteria: ['not at all', 'a little', 'somewhat', 'very', 'central'],
        };
    }
  });
}
