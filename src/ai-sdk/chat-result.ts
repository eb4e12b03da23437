/**
 * A chat completion (OpenAI's shape) as the AI SDK's generate result parts: finish reason, usage
 * and content (reasoning, text, tool calls).
 */
import type { LanguageModelV4Content, LanguageModelV4FinishReason, LanguageModelV4Usage } from '@ai-sdk/provider';
import type { ChatCompletion, ChatUsage, FinishReason } from '../contract/index.ts';

export function finishReason(raw: FinishReason | null | undefined): LanguageModelV4FinishReason {
  switch (raw) {
    case 'stop':
      return { unified: 'stop', raw };
    case 'length':
      return { unified: 'length', raw };
    case 'tool_calls':
      return { unified: 'tool-calls', raw };
    case null:
    case undefined:
      return { unified: 'other', raw: undefined };
    default: {
      const never: never = raw;
      return { unified: 'other', raw: never };
    }
  }
}

/**
 * Token counts: `cacheRead` is the prefix cache's reuse (`cached_tokens`). Reasoning tokens are
 * not counted apart by the engine: for a reply with reasoning, the text/reasoning split is left
 * undefined; without, every output token is text.
 */
export function usage(u: ChatUsage | null | undefined, reasoned: boolean): LanguageModelV4Usage {
  if (!u) {
    return {
      inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: undefined, text: undefined, reasoning: undefined },
    };
  }
  const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: { total: u.prompt_tokens, noCache: u.prompt_tokens - cached, cacheRead: cached, cacheWrite: undefined },
    outputTokens: {
      total: u.completion_tokens,
      text: reasoned ? undefined : u.completion_tokens,
      reasoning: reasoned ? undefined : 0,
    },
    raw: { ...u },
  };
}

export function content(completion: ChatCompletion): LanguageModelV4Content[] {
  const message = completion.choices[0]!.message;
  const out: LanguageModelV4Content[] = [];
  if (message.reasoning_content) out.push({ type: 'reasoning', text: message.reasoning_content });
  if (message.content) out.push({ type: 'text', text: message.content });
  for (const call of message.tool_calls ?? []) {
    out.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: call.function.arguments });
  }
  return out;
}
