import type { ChatCompletionChunk, ChatToolCall } from '../../contract/index.ts';
import type { JevClient } from '../../facade/jev-client.ts';
import type { ReplyStats } from './chat-store.ts';
import { addToolCallDeltas, toolCallsOf, type ToolCallSlots } from './tool-calls.ts';

export interface StreamProgress {
  text: string;
  /** A thinking model's reasoning so far (`delta.reasoning_content`). */
  reasoning: string;
  /** The tools the reply asks to call so far (`delta.tool_calls`, folded by index). */
  toolCalls: ChatToolCall[];
  stats: ReplyStats;
  /** Whether the engine accepted the request (its first chunk arrived). */
  started: boolean;
}

/**
 * Streams one reply, reporting the text (and a thinking model's reasoning, and the tool calls) so far and its timing
 * after every chunk: time to the first text or reasoning, and decode speed (tokens after the first, over the time since it). Token counts
 * come from the usage chunk where the stream ends normally, else from the pieces received.
 */
export async function streamReply(
  client: JevClient,
  body: Record<string, unknown>,
  signal: AbortSignal,
  onProgress: (p: StreamProgress) => void,
): Promise<StreamProgress> {
  const sentAt = performance.now();
  let firstAt: number | null = null;
  let lastAt = sentAt;
  let pieces = 0;
  let slots: ToolCallSlots = [];
  const progress: StreamProgress = {
    text: '',
    reasoning: '',
    toolCalls: [],
    started: false,
    stats: { ttftMs: null, tokensPerSecond: null, completionTokens: 0, promptTokens: null, cachedTokens: null, finishReason: null },
  };
  const rate = (tokens: number) => (firstAt !== null && tokens > 1 && lastAt > firstAt ? ((tokens - 1) * 1000) / (lastAt - firstAt) : null);

  const stream = await client.chat.completions.create({ ...body, stream: true }, { signal });
  progress.started = true;
  for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
    const choice = chunk.choices[0];
    const delta = choice?.delta;
    const piece = delta?.content ?? '';
    const thought = delta?.reasoning_content ?? '';
    const calls = delta?.tool_calls ?? [];
    if (calls.length > 0) {
      slots = addToolCallDeltas(slots, calls);
      progress.toolCalls = toolCallsOf(slots);
    }
    if (piece !== '' || thought !== '' || calls.length > 0) {
      const now = performance.now();
      if (firstAt === null) firstAt = now;
      lastAt = now;
      pieces += 1;
      progress.text += piece;
      progress.reasoning += thought;
      progress.stats = { ...progress.stats, ttftMs: firstAt - sentAt, completionTokens: pieces, tokensPerSecond: rate(pieces) };
    }
    if (choice?.finish_reason) progress.stats = { ...progress.stats, finishReason: choice.finish_reason };
    if (chunk.usage) {
      const tokens = chunk.usage.completion_tokens;
      progress.stats = {
        ...progress.stats,
        completionTokens: tokens,
        promptTokens: chunk.usage.prompt_tokens,
        cachedTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? null,
        tokensPerSecond: rate(tokens),
      };
    }
    onProgress({ ...progress });
  }
  return progress;
}
