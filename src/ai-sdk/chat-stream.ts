/**
 * A streamed chat completion (the client's chunks, OpenAI's shape) as the AI SDK's stream parts:
 * `stream-start`, `response-metadata`, reasoning and text blocks (each opened, its deltas, closed),
 * tool inputs (`tool-input-start` when a call's id and name arrive, its argument pieces as
 * `tool-input-delta`, then `tool-input-end` and the whole `tool-call` once the reply ends), and
 * `finish` with the reason and usage. The stream pulls a chunk when its reader wants one, and
 * cancelling it stops the generation. An abort errors the stream with the AbortError; any other
 * failure is an `error` part followed by `finish` ("error").
 */
import type { LanguageModelV4StreamPart, SharedV4Warning } from '@ai-sdk/provider';
import type { ChatCompletionChunk, ChatUsage, FinishReason } from '../contract/index.ts';
import { finishReason, usage } from './chat-result.ts';

const TEXT = 'text-0';
const REASONING = 'reasoning-0';

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
}

const isAbort = (e: unknown): boolean => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'AbortError';

export function chatStream(chunks: AsyncIterable<ChatCompletionChunk>, warnings: SharedV4Warning[]): ReadableStream<LanguageModelV4StreamPart> {
  const iterator = chunks[Symbol.asyncIterator]();
  let open: typeof TEXT | typeof REASONING | null = null;
  let reasoned = false;
  let metadataSent = false;
  let raw: FinishReason | null = null;
  let used: ChatUsage | null = null;
  const calls = new Map<number, PendingCall>();

  const parts: LanguageModelV4StreamPart[] = [];
  const openBlock = (id: typeof TEXT | typeof REASONING) => {
    if (open === id) return;
    closeBlock();
    parts.push({ type: id === TEXT ? 'text-start' : 'reasoning-start', id });
    open = id;
  };
  const closeBlock = () => {
    if (open !== null) parts.push({ type: open === TEXT ? 'text-end' : 'reasoning-end', id: open });
    open = null;
  };

  const read = (chunk: ChatCompletionChunk) => {
    if (!metadataSent) {
      parts.push({ type: 'response-metadata', id: chunk.id, modelId: chunk.model, timestamp: new Date(chunk.created * 1000) });
      metadataSent = true;
    }
    if (chunk.usage) used = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return;
    if (choice.finish_reason !== null) raw = choice.finish_reason;
    const { reasoning_content: reasoning, content, tool_calls: toolCalls } = choice.delta;
    if (reasoning) {
      reasoned = true;
      openBlock(REASONING);
      parts.push({ type: 'reasoning-delta', id: REASONING, delta: reasoning });
    }
    if (content) {
      openBlock(TEXT);
      parts.push({ type: 'text-delta', id: TEXT, delta: content });
    }
    for (const delta of toolCalls ?? []) {
      closeBlock();
      let call = calls.get(delta.index);
      if (!call) {
        call = { id: delta.id ?? `call-${delta.index}`, name: delta.function?.name ?? '', arguments: '' };
        calls.set(delta.index, call);
        parts.push({ type: 'tool-input-start', id: call.id, toolName: call.name });
      }
      const piece = delta.function?.arguments;
      if (piece) {
        call.arguments += piece;
        parts.push({ type: 'tool-input-delta', id: call.id, delta: piece });
      }
    }
  };

  let finished = false;
  const finish = (failed: boolean) => {
    finished = true;
    closeBlock();
    for (const call of calls.values()) {
      parts.push({ type: 'tool-input-end', id: call.id });
      parts.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
    }
    parts.push({ type: 'finish', finishReason: failed ? { unified: 'error', raw: undefined } : finishReason(raw), usage: usage(used, reasoned) });
  };

  return new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings });
    },
    async pull(controller) {
      // Read until there is something to hand on (a chunk may carry no part, e.g. the role alone).
      while (parts.length === 0) {
        let next: IteratorResult<ChatCompletionChunk>;
        try {
          next = await iterator.next();
        } catch (e) {
          if (isAbort(e)) return controller.error(e);
          parts.push({ type: 'error', error: e });
          finish(true);
          break;
        }
        if (next.done) {
          finish(false);
          break;
        }
        read(next.value);
      }
      for (const part of parts.splice(0)) controller.enqueue(part);
      if (finished) controller.close();
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}
