import type { Question } from '../../contract/index.ts';
import { chatTemplateOf, renderChatTemplate } from '../model/chat-template.ts';
import type { TokenizerModel } from '../model/tokenizer-model.ts';

/**
 * How a decision is laid out as text. The state comes first (`prefix`), so that its key/value
 * cache is computed once and shared by every question; each question's block follows, then the
 * `tail` that hands the turn to the model, then the answer itself.
 */
export interface PromptFrame {
  prefix: string;
  /** Whether the tokenizer adds its special tokens (BOS) to the prefix: only in the plain format. */
  addSpecialTokens: boolean;
  /** The text between a question block and the answer. */
  tail: string;
  /** What the answer text starts with (a space after `Answer:` in the plain format). */
  lead: string;
}

/** One way the model may write an answer: `answer` is what it counts for, `surface` the text. */
export interface LabelSurface {
  answer: string;
  surface: string;
}

export const SYSTEM_PROMPT =
  'You are a careful judge. Read the state, then answer the question about it with exactly one of the allowed answers and nothing else.';

/** The date a decision prompt shows where the template writes one (Llama 3.x's default date). */
export const DECISION_DATE = '26 Jul 2024';

/** Content-free state used to measure a question's label prior (contextual calibration). */
export const CONTENT_FREE_STATE = 'N/A';

// A marker no chat template produces or alters; the template is rendered around it, never around user text.
const SENTINEL = '\u0000jev-question\u0000';

export function promptFrame(lm: Pick<TokenizerModel, 'tokenizer'>, state: string): PromptFrame {
  const statePart = `State:\n${state}\n\n`;
  const around = templateAround(lm.tokenizer);
  if (around) return { prefix: around.head + statePart, addSpecialTokens: false, tail: around.tail, lead: '' };
  // Fallback for models without a chat template (documented in docs/decisions.md).
  return { prefix: `${SYSTEM_PROMPT}\n\n${statePart}`, addSpecialTokens: true, tail: '\nAnswer:', lead: ' ' };
}

/**
 * The chat template's text before and after the user turn of a decision prompt, rendered once
 * per tokenizer (it depends on nothing else: the state goes in after it); null where the model
 * has no usable template.
 */
const frames = new WeakMap<object, { head: string; tail: string } | null>();

function templateAround(tokenizer: TokenizerModel['tokenizer']): { head: string; tail: string } | null {
  if (frames.has(tokenizer)) return frames.get(tokenizer)!;
  let around: { head: string; tail: string } | null = null;
  if (chatTemplateOf(tokenizer) !== null) {
    const rendered = renderChatTemplate(
      tokenizer,
      [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: SENTINEL },
      ],
      // Thinking models (Qwen3) answer at once: `enable_thinking: false` makes the template write
      // an empty think block before the answer. A fixed date keeps a decision's prompt, and so its
      // probabilities, the same from one day to the next (Llama 3.x writes the date). A template
      // without a system role gets the system text folded into the user turn (chat-template.ts).
      { enableThinking: false, dateString: DECISION_DATE },
    );
    const at = rendered.indexOf(SENTINEL);
    if (at >= 0 && rendered.indexOf(SENTINEL, at + 1) < 0) around = { head: rendered.slice(0, at), tail: rendered.slice(at + SENTINEL.length) };
  }
  frames.set(tokenizer, around);
  return around;
}

/**
 * Options are listed in code-point order of their keys, whatever order the request gave, so the
 * order of keys in a request changes no answer. (Position bias among the listed options remains a
 * property of the model; contextual calibration divides out the prior it produces.)
 */
export function canonicalOptionKeys(criteria: Record<string, string | null>): string[] {
  return Object.keys(criteria).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function questionBlock(question: Question): { text: string; labels: LabelSurface[] } {
  const lines: string[] = [];
  if (question.instructions.trim() !== '') lines.push(`Question: ${question.instructions.trim()}`);
  switch (question.type) {
    case 'noul': {
      if (question.criteria.true) lines.push(`Answer true if: ${question.criteria.true}`);
      if (question.criteria.false) lines.push(`Answer false if: ${question.criteria.false}`);
      lines.push('Answer with true or false.');
      return {
        text: lines.join('\n'),
        labels: [
          { answer: 'true', surface: 'true' },
          { answer: 'true', surface: 'True' },
          { answer: 'false', surface: 'false' },
          { answer: 'false', surface: 'False' },
        ],
      };
    }
    case 'choice': {
      const keys = canonicalOptionKeys(question.criteria);
      lines.push('Options:');
      for (const key of keys) {
        const description = question.criteria[key];
        lines.push(description ? `- ${key}: ${description}` : `- ${key}`);
      }
      lines.push('Answer with the name of exactly one option.');
      return { text: lines.join('\n'), labels: keys.map((key) => ({ answer: key, surface: key })) };
    }
    case 'score': {
      lines.push('Scale:');
      question.criteria.forEach((label, i) => lines.push(`${i} = ${label}`));
      lines.push(`Answer with one number from 0 to ${question.criteria.length - 1}.`);
      return {
        text: lines.join('\n'),
        labels: question.criteria.map((_, i) => ({ answer: String(i), surface: String(i) })),
      };
    }
    default: {
      const never: never = question;
      throw new Error(`unknown question type ${(never as { type: string }).type}`);
    }
  }
}
