import { JevError, type ChatMessage } from '../contract/index.ts';
import type { LanguageModel } from './language-model.ts';

/**
 * The tokens of a conversation, ready for the assistant's turn: the model's own chat template
 * where it has one; otherwise a plain transcript (documented in docs/chat.md):
 *
 *     {system}\n\nUser: {text}\nAssistant: {text}\n…User: {text}\nAssistant:
 */
export function chatPromptIds(lm: LanguageModel, messages: readonly ChatMessage[]): number[] {
  const template = (lm.tokenizer as unknown as { chat_template?: unknown }).chat_template;
  if (typeof template === 'string' && template.length > 0) {
    const text = lm.tokenizer.apply_chat_template(messages.map((m) => ({ role: m.role, content: m.content })), {
      tokenize: false,
      add_generation_prompt: true,
    }) as string;
    return lm.encode(text, false);
  }
  const parts: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') parts.push(`${m.content}\n\n`);
    else parts.push(`${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}\n`);
  }
  parts.push('Assistant:');
  return lm.encode(parts.join(''), true);
}

/**
 * Fits a conversation into the context, leaving room for `reserve` new tokens. `error` refuses
 * (422 with the counts); `drop_oldest` drops the oldest turns after the system messages, one at
 * a time, and keeps at least the last message.
 */
export function fitConversation(
  lm: LanguageModel,
  messages: readonly ChatMessage[],
  reserve: number,
  truncation: 'error' | 'drop_oldest',
): { ids: number[]; messages: ChatMessage[]; dropped: number } {
  let kept = [...messages];
  let dropped = 0;
  for (;;) {
    const ids = chatPromptIds(lm, kept);
    if (ids.length + reserve <= lm.contextLength) return { ids, messages: kept, dropped };
    const firstTurn = kept.findIndex((m) => m.role !== 'system');
    const turns = kept.filter((m) => m.role !== 'system').length;
    if (truncation === 'error' || firstTurn < 0 || turns <= 1) {
      throw new JevError(
        'context_length_exceeded',
        `The conversation takes ${ids.length} tokens and ${reserve} more are reserved for the reply, ${ids.length + reserve} in all; the model's context holds ${lm.contextLength}.` +
          (truncation === 'error' ? ' Shorten it, lower max_tokens, or send "truncation": "drop_oldest".' : ''),
        { param: 'messages', details: { prompt_tokens: ids.length, max_tokens: reserve, context_length: lm.contextLength } },
      );
    }
    kept = kept.filter((_, i) => i !== firstTurn);
    dropped += 1;
  }
}
