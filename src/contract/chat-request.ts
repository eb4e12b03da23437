/**
 * The chat completion request, OpenAI's shape, validated and normalized. Every optional field
 * may also be null, which means its default. Fields read (`chatRequestFields`): model,
 * messages, temperature, top_p, max_tokens, max_completion_tokens (an alias of max_tokens),
 * stream, stream_options.include_usage, stop, seed, n, logprobs, top_logprobs,
 * reasoning_effort (OpenAI's field, mapped to a thinking model's switch: see `ReasoningEffort`),
 * response_format (response-format.ts), tools, tool_choice and parallel_tool_calls (chat-tools.ts),
 * and our extension `truncation`. Any other field (frequency_penalty, presence_penalty, logit_bias,
 * user, …) is ignored. A body with `questions` or `state` and no `messages` is a decision request
 * sent to the wrong endpoint, and is told so.
 */
import './zod-config.ts';
import { z } from 'zod';
import { chatMessageSchema } from './chat-message.ts';
import type { ChatMessage, ChatMessageInput } from './chat-message.ts';
import { toolChoiceSchema, toolsSchema, type ChatTool, type ToolChoice } from './chat-tools.ts';
import { responseFormatSchema, type ResponseFormat } from './response-format.ts';
import { JevError } from './errors.ts';
import { errorMessages, validationMessage } from './messages.ts';
import { limits } from './limits.ts';
import { addIssue, isPlainObject, lengthBetween, parseWith } from './validation.ts';

/**
 * What to do when the prompt does not fit the model's context: `error` answers
 * context_length_exceeded (422); `drop_oldest` drops the oldest non-system messages until it
 * fits. OpenAI's Responses API names these `disabled` and `auto`; both names are accepted.
 */
export type Truncation = 'error' | 'drop_oldest';

/**
 * OpenAI's `reasoning_effort`. A model whose template has a thinking switch (Qwen3's
 * `enable_thinking`) thinks for "low", "medium" and "high" and does not for "none" and
 * "minimal"; there are no degrees between. Omitted (null): the template's default (Qwen3:
 * thinking on). A model without the switch ignores it.
 */
export const reasoningEfforts = ['none', 'minimal', 'low', 'medium', 'high'] as const;
export type ReasoningEffort = (typeof reasoningEfforts)[number];

/** What `reasoning_effort` turns the template's `enable_thinking` to (undefined: the template's default). */
export function enableThinkingFor(effort: ReasoningEffort | null): boolean | undefined {
  if (effort === null) return undefined;
  return effort !== 'none' && effort !== 'minimal';
}

export type ChatRequest = {
  model: string;
  messages: ChatMessage[];
  /** 0..2, default 1. */
  temperature: number;
  /** (0, 1], default 1. */
  top_p: number;
  /** Positive integer, or null: up to the context's end. */
  max_tokens: number | null;
  stream: boolean;
  /** At most limits.maxStop non-empty sequences. */
  stop: string[];
  /** Integer, or null: unseeded. */
  seed: number | null;
  n: 1;
  logprobs: boolean;
  /** 0..20; above 0 only with logprobs. */
  top_logprobs: number;
  /** stream_options.include_usage: a last chunk carries usage. */
  include_usage: boolean;
  truncation: Truncation;
  /** Null: the template's default. */
  reasoning_effort: ReasoningEffort | null;
  /** Default `{type:"text"}`. */
  response_format: ResponseFormat;
  /** Function tools; empty when none were given. */
  tools: ChatTool[];
  /** Default "auto" when tools are given, else "none". */
  tool_choice: ToolChoice;
  /** Default true. */
  parallel_tool_calls: boolean;
};

export const chatRequestFields = [
  'model', 'messages', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stream',
  'stream_options', 'stop', 'seed', 'n', 'logprobs', 'top_logprobs', 'truncation',
  'reasoning_effort', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls',
] as const;

export const chatMessagesSchema = z
  .custom<ChatMessageInput[]>()
  .superRefine((raw: unknown, ctx) => {
    if (raw === undefined) return addIssue(ctx, 'required', []);
    if (!Array.isArray(raw)) return addIssue(ctx, 'wrongType', ['an array of messages', raw]);
    lengthBetween(ctx, raw.length, 1, limits.maxMessages, 'messages');
  })
  .pipe(z.array(chatMessageSchema));

/** `stop` as a list: a string is one sequence; null or omitted is none. */
function readStop(raw: unknown, ctx: z.core.$RefinementCtx): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'string' && !Array.isArray(raw)) {
    addIssue(ctx, 'wrongType', ['a string or an array of strings', raw]);
    return z.NEVER;
  }
  const list: readonly unknown[] = typeof raw === 'string' ? [raw] : raw;
  if (!lengthBetween(ctx, list.length, 0, limits.maxStop, 'stop sequences')) return z.NEVER;
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const s = list[i];
    const path = typeof raw === 'string' ? [] : [i];
    if (typeof s !== 'string') addIssue(ctx, 'wrongType', ['a string', s], { path });
    else if (s === '') addIssue(ctx, 'emptyString', [], { path });
    else if (s.length > limits.maxTextChars) addIssue(ctx, 'stringTooLong', [limits.maxTextChars, s.length], { path });
    else out.push(s);
  }
  return out.length === list.length ? out : z.NEVER;
}

export const stopSchema = z.custom<string | string[] | null>().optional().transform(readStop);

const nSchema = z
  .number()
  .superRefine((n, ctx) => {
    if (n !== 1) addIssue(ctx, 'onlyOneChoice', [n]);
  })
  .nullish();

const maxTokensSchema = z.int().min(1).nullish();

export const chatRequestSchema = z
  .object({
    model: z.string().min(1).max(limits.maxKeyChars),
    messages: chatMessagesSchema,
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().gt(0).max(1).nullish(),
    max_tokens: maxTokensSchema,
    max_completion_tokens: maxTokensSchema,
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
    stop: stopSchema,
    seed: z.int().nullish(),
    n: nSchema,
    logprobs: z.boolean().nullish(),
    top_logprobs: z.int().min(0).max(limits.maxTopLogprobs).nullish(),
    truncation: z.enum(['error', 'drop_oldest', 'disabled', 'auto']).nullish(),
    reasoning_effort: z.enum(reasoningEfforts).nullish(),
    response_format: responseFormatSchema,
    tools: toolsSchema,
    tool_choice: toolChoiceSchema,
    parallel_tool_calls: z.boolean().nullish(),
  })
  .superRefine((r, ctx) => {
    if ((r.top_logprobs ?? 0) > 0 && r.logprobs !== true) {
      addIssue(ctx, 'topLogprobsNeedsLogprobs', [], { path: ['top_logprobs'] });
    }
    const a = r.max_tokens ?? null;
    const b = r.max_completion_tokens ?? null;
    if (a !== null && b !== null && a !== b) addIssue(ctx, 'maxTokensConflict', [], { path: ['max_completion_tokens'] });
    const choice = r.tool_choice;
    if (choice === 'required' && r.tools.length === 0) addIssue(ctx, 'toolChoiceNeedsTools', ['required'], { path: ['tool_choice'] });
    if (typeof choice === 'object') {
      const names = r.tools.map((t) => t.function.name);
      if (names.length === 0) addIssue(ctx, 'toolChoiceNeedsTools', [choice.function.name], { path: ['tool_choice'] });
      else if (!names.includes(choice.function.name)) addIssue(ctx, 'toolChoiceUnknown', [choice.function.name, names], { path: ['tool_choice', 'function', 'name'] });
    }
  })
  .transform(
    (r): ChatRequest => ({
      model: r.model,
      messages: r.messages,
      temperature: r.temperature ?? 1,
      top_p: r.top_p ?? 1,
      max_tokens: r.max_completion_tokens ?? r.max_tokens ?? null,
      stream: r.stream ?? false,
      stop: r.stop,
      seed: r.seed ?? null,
      n: 1,
      logprobs: r.logprobs ?? false,
      top_logprobs: r.top_logprobs ?? 0,
      include_usage: r.stream_options?.include_usage ?? false,
      truncation: r.truncation === 'drop_oldest' || r.truncation === 'auto' ? 'drop_oldest' : 'error',
      reasoning_effort: r.reasoning_effort ?? null,
      response_format: r.response_format,
      tools: r.tools,
      tool_choice: r.tool_choice ?? (r.tools.length > 0 ? 'auto' : 'none'),
      parallel_tool_calls: r.parallel_tool_calls ?? true,
    }),
  );

/** What a client may send (before normalization). */
export type ChatRequestInput = z.input<typeof chatRequestSchema>;

/**
 * Validates and normalizes a chat completion request body (already JSON-parsed). The model id
 * is any non-empty string here; whether it names a served model is the facade's check.
 * Throws JevError `invalid_request` (400) naming the field in `param`.
 */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isPlainObject(body)) throw new JevError('invalid_request', errorMessages.bodyNotObject(body), { param: null });
  if (!Object.hasOwn(body, 'messages')) {
    const field = Object.hasOwn(body, 'questions') ? 'questions' : Object.hasOwn(body, 'state') ? 'state' : null;
    if (field !== null) {
      throw new JevError('invalid_request', validationMessage('decisionBodyAtChatEndpoint', field, []), {
        param: field,
        details: { path: [field] },
      });
    }
  }
  return parseWith(chatRequestSchema, body);
}
