/**
 * An independent rendering of a decision prompt, for tests: the chat template applied to real
 * messages (the system prompt, then a user turn of the state and the question block), or the
 * plain format for a model without a template, and the whole text (prompt + label) tokenized at
 * once. The engine renders around a sentinel and tokenizes in parts; these must agree.
 */
import type { Question } from '../../src/contract/index.ts';
import { SYSTEM_PROMPT, questionBlock } from '../../src/engine/decision/decision-prompt.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';

export interface FullPrompt {
  /** The text before the answer. */
  text: string;
  addSpecialTokens: boolean;
  /** Per label (questionBlock order): the answer it counts for and the ids of the whole text with it. */
  labels: { answer: string; surface: string; ids: number[] }[];
}

export function fullPrompt(lm: LanguageModel, state: string, question: Question): FullPrompt {
  const block = questionBlock(question);
  const user = `State:\n${state}\n\n${block.text}`;
  const template = (lm.tokenizer as unknown as { chat_template?: unknown }).chat_template;
  let text: string;
  let addSpecialTokens: boolean;
  if (typeof template === 'string' && template !== '') {
    // Thinking off and a fixed date, as docs/decisions.md says decisions are rendered.
    const options = { tokenize: false, add_generation_prompt: true, ...{ enable_thinking: false, date_string: '26 Jul 2024' } };
    text = lm.tokenizer.apply_chat_template(
      [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: user },
      ],
      options,
    ) as string;
    addSpecialTokens = false;
  } else {
    text = `${SYSTEM_PROMPT}\n\n${user}\nAnswer: `;
    addSpecialTokens = true;
  }
  return {
    text,
    addSpecialTokens,
    labels: block.labels.map((l) => ({ ...l, ids: lm.tokenizer.encode(text + l.surface, { add_special_tokens: addSpecialTokens }) })),
  };
}

/** The labels' ids split where they diverge: the shared context and each label's path (at least one token each). */
export function splitAtDivergence(labels: readonly { answer: string; ids: readonly number[] }[]): {
  context: number[];
  paths: { answer: string; path: number[] }[];
} {
  let n = Math.min(...labels.map((l) => l.ids.length)) - 1;
  for (let i = 0; i < n; i++) {
    if (labels.some((l) => l.ids[i] !== labels[0]!.ids[i])) n = i;
  }
  return { context: labels[0]!.ids.slice(0, n), paths: labels.map((l) => ({ answer: l.answer, path: l.ids.slice(n) })) };
}
