/**
 * The chat completion response, OpenAI's shape: a whole completion (`chat.completion`) or,
 * when streamed, a sequence of chunks (`chat.completion.chunk`), each sent as one
 * `data: {json}` server-sent event and ended by `data: [DONE]`.
 */
import './zod-config.ts';
import { z } from 'zod';
import type { ChatToolCall } from './chat-message.ts';
import { chatToolCallSchema } from './chat-message.ts';
import { responseCheckMessages } from './messages.ts';

/** `tool_calls`: the reply ends in tool calls (message.tool_calls), which the client runs. */
export type FinishReason = 'stop' | 'length' | 'tool_calls';

/**
 * A piece of a tool call in a streamed chunk (OpenAI's shape): the first piece of call `index`
 * carries its `id`, `type` and `function.name`; later pieces append to `function.arguments`.
 */
export type ChatToolCallDelta = {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
};

/** One alternative at a position: its token text, natural-log probability, and UTF-8 bytes. */
export type TopLogprob = { token: string; logprob: number; bytes: number[] | null };
export type TokenLogprob = TopLogprob & { top_logprobs: TopLogprob[] };
export type ChoiceLogprobs = { content: TokenLogprob[] };

export type ChatUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** OpenAI's field: `cached_tokens` is how many prompt tokens came from the previous turn's KV cache. */
  prompt_tokens_details?: { cached_tokens: number };
};

export type ChatCompletion = {
  /** 'chatcmpl-…' */
  id: string;
  object: 'chat.completion';
  /** Unix time in seconds. */
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    /**
     * `reasoning_content` (vLLM's and DeepSeek's field): a thinking model's reasoning, the text
     * of its `<think>` block, apart from the answer in `content`. Present only for a model whose
     * template thinks (Qwen3); "" when it did not think. `content` is null when the reply is
     * only tool calls (`tool_calls`, finish_reason "tool_calls").
     */
    message: { role: 'assistant'; content: string | null; reasoning_content?: string; tool_calls?: ChatToolCall[] };
    finish_reason: FinishReason | null;
    logprobs: ChoiceLogprobs | null;
  }>;
  usage: ChatUsage;
};

/** A piece of the reply: of the answer (`content`), of the reasoning (`reasoning_content`), or of tool calls. */
export type ChatCompletionDelta = { role?: 'assistant'; content?: string; reasoning_content?: string; tool_calls?: ChatToolCallDelta[] };

export type ChatCompletionChunk = {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  /** Empty in the last chunk when it only carries usage (stream_options.include_usage). */
  choices: Array<{
    index: 0;
    delta: ChatCompletionDelta;
    finish_reason: FinishReason | null;
    logprobs: ChoiceLogprobs | null;
  }>;
  usage?: ChatUsage | null;
};

/** The prefix of every completion id. */
export const chatCompletionIdPrefix = 'chatcmpl-';

/** The stream's terminating event data (`data: [DONE]`). */
export const streamDoneSentinel = '[DONE]';

export const finishReasonSchema = z.enum(['stop', 'length', 'tool_calls']);

const byteSchema = z.int().min(0).max(255);
export const topLogprobSchema = z.object({
  token: z.string(),
  logprob: z.number().max(0),
  bytes: z.array(byteSchema).nullable(),
});
export const tokenLogprobSchema = topLogprobSchema.extend({ top_logprobs: z.array(topLogprobSchema) });
export const choiceLogprobsSchema = z.object({ content: z.array(tokenLogprobSchema) });

export const chatUsageSchema = z
  .object({
    prompt_tokens: z.int().min(0),
    completion_tokens: z.int().min(0),
    total_tokens: z.int().min(0),
    prompt_tokens_details: z.object({ cached_tokens: z.int().min(0) }).optional(),
  })
  .refine((u) => u.total_tokens === u.prompt_tokens + u.completion_tokens, {
    message: responseCheckMessages.totalTokens(),
    path: ['total_tokens'],
  });

const completionIdSchema = z.string().startsWith(chatCompletionIdPrefix);

/** The fields a completion and each of its chunks open with. */
const completionHead = <O extends string>(object: O) => ({
  id: completionIdSchema,
  object: z.literal(object),
  created: z.int().min(0),
  model: z.string(),
});

/** One choice, around its `message` (a completion) or its `delta` (a chunk). */
const choiceOf = <B extends z.ZodRawShape>(body: B) =>
  z.object({ index: z.literal(0), ...body, finish_reason: finishReasonSchema.nullable(), logprobs: choiceLogprobsSchema.nullable() });

export const chatCompletionSchema = z.object({
  ...completionHead('chat.completion'),
  choices: z
    .array(
      choiceOf({
        message: z
          .object({
            role: z.literal('assistant'),
            content: z.string().nullable(),
            reasoning_content: z.string().optional(),
            tool_calls: z.array(chatToolCallSchema).min(1).optional(),
          })
          .refine((m) => m.content !== null || m.tool_calls !== undefined, {
            message: responseCheckMessages.contentOrToolCalls(),
            path: ['content'],
          }),
      }).refine((c) => (c.message.tool_calls === undefined ? c.finish_reason !== 'tool_calls' : c.finish_reason === 'tool_calls' || c.finish_reason === 'length'), {
        message: responseCheckMessages.toolCallsFinish(),
        path: ['finish_reason'],
      }),
    )
    .length(1),
  usage: chatUsageSchema,
});

export const chatToolCallDeltaSchema = z.object({
  index: z.int().min(0),
  id: z.string().min(1).optional(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string().min(1).optional(), arguments: z.string().optional() }).optional(),
});

export const chatCompletionDeltaSchema = z.object({
  role: z.literal('assistant').optional(),
  content: z.string().optional(),
  reasoning_content: z.string().optional(),
  tool_calls: z.array(chatToolCallDeltaSchema).min(1).optional(),
});

export const chatCompletionChunkSchema = z.object({
  ...completionHead('chat.completion.chunk'),
  choices: z.array(choiceOf({ delta: chatCompletionDeltaSchema })).max(1),
  usage: chatUsageSchema.nullish(),
});
