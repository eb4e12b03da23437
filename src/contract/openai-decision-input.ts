/**
 * OpenAI's Decisions `input` and question `instructions`, rendered to the text the decision engine
 * reads: the Jev request's `state` and a question's `instructions`. One renderer, so that the same
 * text asked through either shape is the same prompt.
 *
 * `input`:
 * - A string is the state itself (as a Jev `state` string).
 * - An array of items is a transcript, one block per item, blocks joined by a blank line:
 *   - a message (`type` "message" or absent): `<role>: <content>`, role `user`, `system`,
 *     `developer` or `assistant`;
 *   - `function_call`: `function_call <call_id>: <namespace.>name(<arguments>)`;
 *   - `function_call_output`: `function_call_output <call_id>: <output>`;
 *   - `custom_tool_call`: `custom_tool_call <call_id>: <name>(<input>)`;
 *   - `custom_tool_call_output`: `custom_tool_call_output <call_id>: <output>`.
 *   An output's `call_id` must name a call earlier in `input`.
 * - Content (a string, or parts joined by "\n"): `input_text` is its text; `input_json` its
 *   `data` as JSON with keys sorted and 2-space indentation (the Jev state's JSON rendering,
 *   state.ts); an assistant's `output_text` its text and `refusal` `refusal: <text>`.
 *   `input_image` is refused (400, naming the part): the loaded model reads text only.
 * - `prompt_cache_breakpoint`, an item's `id`, `status` and an assistant's `phase` are accepted
 *   and do not change the text.
 *
 * A question's `instructions`: a string, or `input_text` and `input_json` parts joined by "\n".
 */
import './zod-config.ts';
import { z } from 'zod';
import { limits } from './limits.ts';
import type { PathSegment } from './param-path.ts';
import { boundedStateText, jsonDataTextSchema } from './state.ts';
import { addIssue, isPlainObject } from './validation.ts';

type Ctx = Parameters<Parameters<z.ZodType['superRefine']>[0]>[1];

/** Parses `value` with `schema`; its issues are reported to `ctx` under `path`. Undefined where it failed. */
function sub<S extends z.ZodType>(ctx: Ctx, schema: S, value: unknown, path: readonly PathSegment[]): z.output<S> | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data as z.output<S>;
  for (const issue of result.error.issues) {
    ctx.addIssue({ ...(issue as z.core.$ZodIssue), path: [...path, ...issue.path] } as Parameters<Ctx['addIssue']>[0]);
  }
  return undefined;
}

const breakpointSchema = z.object({ mode: z.literal('explicit') }).nullish();
const textSchema = z.string().max(limits.maxMessageChars);

type PartKind = 'input_text' | 'input_json' | 'input_image' | 'output_text' | 'refusal';

const partSchemas = {
  input_text: z.object({ type: z.literal('input_text'), text: textSchema, prompt_cache_breakpoint: breakpointSchema }).transform((p) => p.text),
  input_json: z.object({ type: z.literal('input_json'), data: jsonDataTextSchema }).transform((p) => p.data),
  output_text: z.object({ type: z.literal('output_text'), text: textSchema }).transform((p) => p.text),
  refusal: z.object({ type: z.literal('refusal'), refusal: textSchema }).transform((p) => `refusal: ${p.refusal}`),
} as const;

/** A string, or an array of the parts `kinds` allows, as one text (parts joined by "\n"); `input_image` is refused where it sits. */
function contentText(ctx: Ctx, raw: unknown, kinds: readonly PartKind[], path: readonly PathSegment[]): string | undefined {
  if (typeof raw === 'string') return sub(ctx, textSchema, raw, path);
  const expected = `a string or an array of ${kinds.join(', ')} parts`;
  if (!Array.isArray(raw)) {
    if (raw === undefined) addIssue(ctx, 'required', [], { path });
    else addIssue(ctx, 'wrongType', [expected, raw], { path });
    return undefined;
  }
  const texts: string[] = [];
  let ok = true;
  raw.forEach((part: unknown, j) => {
    const at = [...path, j];
    const type = isPlainObject(part) ? part['type'] : undefined;
    if (type === 'input_image' && kinds.includes('input_image')) {
      addIssue(ctx, 'imagePartUnsupported', [], { path: at });
      ok = false;
      return;
    }
    if (!isPlainObject(part)) {
      addIssue(ctx, 'wrongType', [`a content part (${kinds.join(', ')})`, part], { path: at });
      ok = false;
      return;
    }
    const allowed = kinds.filter((k): k is keyof typeof partSchemas => k !== 'input_image');
    if (typeof type !== 'string' || !(allowed as string[]).includes(type)) {
      addIssue(ctx, 'oneOf', [kinds, type], { path: [...at, 'type'] });
      ok = false;
      return;
    }
    const text = sub(ctx, partSchemas[type as keyof typeof partSchemas], part, at);
    if (text === undefined) ok = false;
    else texts.push(text);
  });
  return ok ? texts.join('\n') : undefined;
}

const roles = ['user', 'system', 'developer', 'assistant'] as const;
const contentKinds: Record<(typeof roles)[number], readonly PartKind[]> = {
  user: ['input_text', 'input_image', 'input_json'],
  system: ['input_text'],
  developer: ['input_text'],
  assistant: ['output_text', 'refusal'],
};
const itemTypes = ['message', 'function_call', 'function_call_output', 'custom_tool_call', 'custom_tool_call_output'] as const;

const callIdSchema = z.string().min(1).max(limits.maxKeyChars);
const callSchema = z.object({
  call_id: callIdSchema,
  name: z.string().min(1).max(limits.maxKeyChars),
  namespace: z.string().max(limits.maxKeyChars).nullish(),
});

/** One item of an `input` array as its block of the transcript; `calls`: the call ids seen so far. */
function itemText(ctx: Ctx, item: unknown, path: readonly PathSegment[], calls: Set<string>): string | undefined {
  if (!isPlainObject(item)) {
    addIssue(ctx, 'wrongType', ['a message, function call or tool output item', item], { path });
    return undefined;
  }
  const type = item['type'] ?? 'message';
  switch (type) {
    case 'message': {
      const role = sub(ctx, z.enum(roles), item['role'], [...path, 'role']);
      if (role === undefined) return undefined;
      const text = contentText(ctx, item['content'], contentKinds[role], [...path, 'content']);
      return text === undefined ? undefined : `${role}: ${text}`;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const argsKey = type === 'function_call' ? 'arguments' : 'input';
      const call = sub(ctx, callSchema.extend({ [argsKey]: textSchema }), item, path) as
        | (z.output<typeof callSchema> & Record<string, string>)
        | undefined;
      if (call === undefined) return undefined;
      calls.add(call.call_id);
      const name = call.namespace ? `${call.namespace}.${call.name}` : call.name;
      return `${type} ${call.call_id}: ${name}(${call[argsKey]})`;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const callId = sub(ctx, callIdSchema, item['call_id'], [...path, 'call_id']);
      if (callId === undefined) return undefined;
      if (!calls.has(callId)) {
        addIssue(ctx, 'unknownCallId', [callId], { path: [...path, 'call_id'] });
        return undefined;
      }
      const text = contentText(ctx, item['output'], ['input_text', 'input_image'], [...path, 'output']);
      return text === undefined ? undefined : `${type} ${callId}: ${text}`;
    }
    default:
      addIssue(ctx, 'oneOf', [itemTypes, type], { path: [...path, 'type'] });
      return undefined;
  }
}

/** `input` → the state text (never empty, at most `limits.maxStateChars` characters). */
export const decisionInputSchema = z.custom<string | unknown[]>().transform((raw: unknown, ctx): string => {
  let text: string | undefined;
  if (typeof raw === 'string') {
    text = raw;
  } else if (Array.isArray(raw)) {
    if (raw.length === 0 || raw.length > limits.maxMessages) {
      addIssue(ctx, raw.length === 0 ? 'tooFew' : 'tooMany', [raw.length === 0 ? 1 : limits.maxMessages, raw.length, 'items']);
      return z.NEVER;
    }
    const calls = new Set<string>();
    const blocks: string[] = [];
    for (let i = 0; i < raw.length; i++) {
      const block = itemText(ctx, raw[i], [i], calls);
      if (block === undefined) return z.NEVER;
      blocks.push(block);
    }
    text = blocks.join('\n\n');
  } else {
    if (raw === undefined) addIssue(ctx, 'required', []);
    else addIssue(ctx, 'wrongType', ['a string or an array of messages and function call items', raw]);
    return z.NEVER;
  }
  return boundedStateText(text, ctx);
});

/** A question's `instructions` → its text (input_text and input_json parts; an image is refused). */
export const decisionInstructionsSchema = z.custom<string | unknown[]>().transform((raw: unknown, ctx): string => {
  const text = contentText(ctx, raw, ['input_text', 'input_image', 'input_json'], []);
  if (text === undefined) return z.NEVER;
  if (text.length > limits.maxTextChars) {
    addIssue(ctx, 'stringTooLong', [limits.maxTextChars, text.length]);
    return z.NEVER;
  }
  return text;
});
