/**
 * A chat message, OpenAI's shape. `content` is a string, or an array of text content parts
 * (`[{type:'text',text}]`, what OpenAI-compatible clients send for multi-part messages), read
 * as their texts joined with "\n"; other part types (images, audio) are refused, naming the
 * part. OpenAI's `developer` role is read as `system`. Other message fields (`name`, …) are
 * ignored.
 *
 * Tool calls: an assistant message may carry `tool_calls` (the calls the model made), its
 * `content` then null or absent (normalized to ""); a `tool` message carries the result of one
 * call, naming it by `tool_call_id`.
 */
import './zod-config.ts';
import { z } from 'zod';
import { limits } from './limits.ts';
import type { PathSegment } from './param-path.ts';
import { addIssue, isPlainObject } from './validation.ts';

/** One call of a function tool, as the model made it: `arguments` is the JSON text of its arguments. */
export type ChatToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; content: string; tool_call_id: string };
export type ChatRole = ChatMessage['role'];
export type ChatTextPart = { type: 'text'; text: string };

/** Roles a request may name; `developer` (OpenAI's newer name for system) becomes `system`. */
export const chatRoleInputs = ['system', 'user', 'assistant', 'tool', 'developer'] as const;

export const chatRoleSchema = z.enum(chatRoleInputs).transform((r): ChatRole => (r === 'developer' ? 'system' : r));

type Ctx = z.core.$RefinementCtx;

/** A message's content as text (parts joined), or z.NEVER after reporting the problem at `path`. */
function readContent(raw: unknown, ctx: Ctx, path: PathSegment[]): string {
  let text: string;
  if (typeof raw === 'string') {
    text = raw;
  } else if (Array.isArray(raw)) {
    const texts: string[] = [];
    for (let i = 0; i < raw.length; i++) {
      const part: unknown = raw[i];
      if (!isPlainObject(part)) {
        addIssue(ctx, 'wrongType', ['a content part object', part], { path: [...path, i] });
        return z.NEVER;
      }
      if (part['type'] !== 'text') {
        if (part['type'] === undefined) addIssue(ctx, 'required', [], { path: [...path, i, 'type'] });
        else addIssue(ctx, 'unsupportedContentPart', [part['type']], { path: [...path, i, 'type'] });
        return z.NEVER;
      }
      const partText = part['text'];
      if (typeof partText !== 'string') {
        if (partText === undefined) addIssue(ctx, 'required', [], { path: [...path, i, 'text'] });
        else addIssue(ctx, 'wrongType', ['a string', partText], { path: [...path, i, 'text'] });
        return z.NEVER;
      }
      texts.push(partText);
    }
    text = texts.join('\n');
  } else {
    if (raw === undefined) addIssue(ctx, 'required', [], { path });
    else addIssue(ctx, 'wrongType', ['a string or an array of text content parts', raw], { path });
    return z.NEVER;
  }
  if (text.length > limits.maxMessageChars) {
    addIssue(ctx, 'stringTooLong', [limits.maxMessageChars, text.length], { path });
    return z.NEVER;
  }
  return text;
}

export const chatContentSchema = z.custom<string | ChatTextPart[]>().transform((raw: unknown, ctx): string => readContent(raw, ctx, []));

export const chatToolCallSchema = z.object({
  id: z.string().min(1).max(limits.maxKeyChars),
  type: z.literal('function'),
  function: z.object({
    name: z.string().min(1).max(limits.maxKeyChars),
    arguments: z.string().max(limits.maxMessageChars),
  }),
});

export const chatMessageSchema = z
  .object({
    role: chatRoleSchema,
    content: z.unknown().optional(),
    tool_calls: z.array(chatToolCallSchema).nullish(),
    tool_call_id: z.string().min(1).max(limits.maxKeyChars).nullish(),
  })
  .transform((m, ctx): ChatMessage => {
    const calls = m.tool_calls ?? [];
    if (calls.length > 0 && m.role !== 'assistant') {
      addIssue(ctx, 'wrongType', ['absent (only assistant messages carry tool_calls)', m.tool_calls], { path: ['tool_calls'] });
      return z.NEVER;
    }
    switch (m.role) {
      case 'assistant': {
        if (calls.length === 0) return { role: 'assistant', content: readContent(m.content, ctx, ['content']) };
        if (m.content !== undefined && m.content !== null && typeof m.content !== 'string') {
          addIssue(ctx, 'toolCallsContent', [], { path: ['content'] });
          return z.NEVER;
        }
        const content = typeof m.content === 'string' ? readContent(m.content, ctx, ['content']) : '';
        return { role: 'assistant', content, tool_calls: calls };
      }
      case 'tool': {
        const content = readContent(m.content, ctx, ['content']);
        if (m.tool_call_id === undefined || m.tool_call_id === null) {
          addIssue(ctx, 'required', [], { path: ['tool_call_id'] });
          return z.NEVER;
        }
        return { role: 'tool', content, tool_call_id: m.tool_call_id };
      }
      default:
        return { role: m.role, content: readContent(m.content, ctx, ['content']) };
    }
  });

export type ChatMessageInput = z.input<typeof chatMessageSchema>;
