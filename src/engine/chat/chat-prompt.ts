import { JevError, type ChatMessage, type ChatTool } from '../../contract/index.ts';
import { tokensFarBeyond } from '../model/context-bound.ts';
import { chatTemplateOf, renderChatTemplate, type RenderOptions } from '../model/chat-template.ts';
import type { LanguageModel } from '../model/language-model.ts';
import { toolStyleOf } from './tool-format.ts';
import { toolConversation } from './tool-prompt.ts';

export interface PromptOptions extends Omit<RenderOptions, 'tools'> {
  /** The tools the reply may call (tool-prompt.ts renders them); null or absent: none. */
  tools?: readonly ChatTool[] | null | undefined;
}

/**
 * The tokens of a conversation, ready for the assistant's turn: the model's own chat template
 * where it has one (rendered by chat-template.ts: a template without a system role gets the
 * system text folded into the first user turn; `enableThinking` switches Qwen3's thinking);
 * otherwise a plain transcript (documented in docs/chat.md):
 *
 *     {system}\n\nUser: {text}\nAssistant: {text}\n…User: {text}\nAssistant:
 */
export function chatPromptIds(lm: LanguageModel, messages: readonly ChatMessage[], options: PromptOptions = {}): number[] {
  return chatPrompt(lm, messages, options).ids;
}

/** The prompt's text and its tokens (the text tells whether the template left a think block open). */
export function chatPrompt(lm: LanguageModel, input: readonly ChatMessage[], options: PromptOptions = {}): { text: string; ids: number[] } {
  const template = chatTemplateOf(lm.tokenizer);
  const { tools: offered, ...render } = options;
  const { messages, tools } = toolConversation(toolStyleOf(template), input, offered ?? null);
  if (template !== null) {
    const text = renderChatTemplate(lm.tokenizer, messages, { ...render, tools });
    return { text, ids: lm.encode(text, false) };
  }
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') parts.push(`${m.content}\n\n`);
    else parts.push(`${m.role === 'user' ? 'User' : m.role === 'tool' ? 'Tool' : 'Assistant'}: ${m.content}\n`);
  }
  parts.push('Assistant:');
  const text = parts.join('');
  return { text, ids: lm.encode(text, true) };
}

/**
 * Fits a conversation into the context, leaving room for `reserve` new tokens. `error` refuses
 * (422 with the counts); `drop_oldest` drops the oldest turns after the system messages, and keeps
 * at least the last message. The turns to keep are found by doubling then halving (a few
 * renderings of the template, each of what is kept), not by dropping one turn at a time (10,000
 * messages would take hours); a message that alone is far past the context is refused (the
 * system messages and the last one) or dropped with all before it, without reading it whole.
 */
export function fitConversation(
  lm: LanguageModel,
  messages: readonly ChatMessage[],
  reserve: number,
  truncation: 'error' | 'drop_oldest',
  options: PromptOptions = {},
): { ids: number[]; text: string; messages: ChatMessage[]; dropped: number } {
  const isTurn = (m: ChatMessage) => m.role !== 'system';
  const lastTurn = messages.findLastIndex(isTurn);
  let from = 0; // turns before this index are dropped
  messages.forEach((m, i) => {
    const tokens = tokensFarBeyond(lm, m.content, lm.contextLength);
    if (tokens === null) return;
    if (truncation === 'error' || !isTurn(m) || i === lastTurn) {
      throw new JevError('context_length_exceeded', `Message ${i} alone takes more than ${tokens} tokens (its first part alone); the model's context holds ${lm.contextLength}.`, {
        param: `messages[${i}].content`,
        details: { message_tokens_at_least: tokens, context_length: lm.contextLength },
      });
    }
    from = i + 1;
  });
  const turns = messages.flatMap((m, i) => (isTurn(m) && i >= from ? [i] : []));
  const droppedBefore = messages.filter((m, i) => isTurn(m) && i < from).length;
  /** The system messages and the last `n` turns, in order. */
  const keep = (n: number) => {
    const kept = new Set(turns.slice(turns.length - n));
    return messages.filter((m, i) => !isTurn(m) || kept.has(i));
  };
  const fits = (ids: number[]) => ids.length + reserve <= lm.contextLength;
  const refuse = (ids: number[]) =>
    new JevError(
      'context_length_exceeded',
      `The conversation takes ${ids.length} tokens and ${reserve} more are reserved for the reply, ${ids.length + reserve} in all; the model's context holds ${lm.contextLength}.` +
        (truncation === 'error' ? ' Shorten it, lower max_tokens, or send "truncation": "drop_oldest".' : ''),
      { param: 'messages', details: { prompt_tokens: ids.length, max_tokens: reserve, context_length: lm.contextLength } },
    );

  const all = keep(turns.length);
  const allPrompt = chatPrompt(lm, all, options);
  const allIds = allPrompt.ids;
  if (fits(allIds)) return { ids: allIds, text: allPrompt.text, messages: all, dropped: droppedBefore };
  if (truncation === 'error' || turns.length <= 1) throw refuse(allIds);
  // The most turns that fit: `good` fits (or is 0), `bad` does not.
  let good = 0;
  let bad = turns.length;
  let goodIds: number[] = [];
  let goodText = '';
  const attempt = (n: number): boolean => {
    const prompt = chatPrompt(lm, keep(n), options);
    const ids = prompt.ids;
    if (!fits(ids)) {
      bad = n;
      if (n === 1) throw refuse(ids);
      return false;
    }
    good = n;
    goodIds = ids;
    goodText = prompt.text;
    return true;
  };
  for (let n = 1; n < bad && attempt(n); n *= 2);
  while (bad - good > 1) attempt(Math.floor((good + bad) / 2));
  return { ids: goodIds, text: goodText, messages: keep(good), dropped: droppedBefore + turns.length - good };
}
