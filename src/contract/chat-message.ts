/**
 * A chat message, OpenAI's shape. `content` is a string, or an array of text content parts
 * (`[{type:'text',text}]`, what OpenAI-compatible clients send for multi-part messages), read
 * as their texts joined with "\n"; other part types (images, audio) are refused, naming the
 * part. OpenAI's `developer` role is read as `system`. Other message fields (`name`, …) are
 * ignored.
 */
import './zod-config.ts';
import { z } from 'zod';
import { limits } from './limits.ts';
import { addIssue, isPlainObject } from './validation.ts';

export type ChatRole = 'system' | 'user' | 'assistant';
export type ChatMessage = { role: ChatRole; content: string };
export type ChatTextPart = { type: 'text'; text: string };

/** Roles a request may name; `developer` (OpenAI's newer name for system) becomes `system`. */
export const chatRoleInputs = ['system', 'user', 'assistant', 'developer'] as const;

export const chatRoleSchema = z.enum(chatRoleInputs).transform((r): ChatRole => (r === 'developer' ? 'system' : r));

export const chatContentSchema = z.custom<string | ChatTextPart[]>().transform((raw: unknown, ctx): string => {
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else if (Array.isArray(raw)) {
    const texts: string[] = [];
    for (let i = 0; i < raw.length; i++) {
      const part: unknown = raw[i];
      if (!isPlainObject(part)) {
        addIssue(ctx, 'wrongType', ['a content part object', part], { path: [i] });
        return z.NEVER;
      }
      if (part['type'] !== 'text') {
        if (part['type'] === undefined) addIssue(ctx, 'required', [], { path: [i, 'type'] });
        else addIssue(ctx, 'unsupportedContentPart', [part['type']], { path: [i, 'type'] });
        return z.NEVER;
      }
      const partText = part['text'];
      if (typeof partText !== 'string') {
        if (partText === undefined) addIssue(ctx, 'required', [], { path: [i, 'text'] });
        else addIssue(ctx, 'wrongType', ['a string', partText], { path: [i, 'text'] });
        return z.NEVER;
      }
      texts.push(partText);
    }
    text = texts.join('\n');
  } else {
    if (raw === undefined) addIssue(ctx, 'required', []);
    else addIssue(ctx, 'wrongType', ['a string or an array of text content parts', raw]);
    return z.NEVER;
  }
  if (text.length > limits.maxMessageChars) {
    addIssue(ctx, 'stringTooLong', [limits.maxMessageChars, text.length]);
    return z.NEVER;
  }
  return text;
});

export const chatMessageSchema = z.object({ role: chatRoleSchema, content: chatContentSchema });

export type ChatMessageInput = z.input<typeof chatMessageSchema>;
