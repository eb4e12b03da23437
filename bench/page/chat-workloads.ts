/**
 * The bench worker's chat workloads: a greedy streamed completion through Engine.chat against the
 * same through transformers.js' text-generation pipeline, the single-token call the prefix-cache
 * rows time, and chat under a response format (structured-chat.ts), on the loaded model
 * (loaded-model.ts). Timed with performance.now() here, in the worker.
 */
import { TextGenerationPipeline, TextStreamer } from '@huggingface/transformers';
import type { ChatCompletionChunk } from '../../src/contract/index.ts';
import { chatPromptIds } from '../../src/engine/chat/chat-prompt.ts';
import { call, need, needEngine } from './loaded-model.ts';
import { meters } from './meters.ts';
import { maskingMs, structuredChat } from './structured-chat.ts';
import { proseOfTokens } from './texts.ts';

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** The transcript chat-prompt.ts writes for a model without a chat template. */
function plainTranscript(messages: readonly Message[]): string {
  const parts = messages.map((m) => (m.role === 'system' ? `${m.content}\n\n` : `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}\n`));
  return parts.join('') + 'Assistant:';
}

export const chatWorkloads = {
  /** A user message of about `tokens` tokens (its own text, without the template). */
  userText(tokens: number, seed: number): string {
    return proseOfTokens(need().tokenizer, tokens, seed).text;
  },

  /** Streams a greedy completion through the engine from cold (prefix cache cleared); times the first content chunk and the end. */
  async engineChat(messages: Message[], maxNew: number) {
    const engine = needEngine();
    await engine.clearCache();
    let first = -1;
    let runAtFirst = 0;
    let chunks = 0;
    const m0 = meters.modelMs;
    const t0 = performance.now();
    const res = await engine.chat({ model: 'jev', messages, max_tokens: maxNew, temperature: 0, stream: true }, call(), (chunk: ChatCompletionChunk) => {
      if (chunk.choices[0]?.delta?.content) {
        if (first < 0) {
          first = performance.now();
          runAtFirst = meters.runMs;
        }
        chunks++;
      }
    });
    const end = performance.now();
    const n = res.usage.completion_tokens;
    if (first < 0) {
      first = end;
      runAtFirst = meters.runMs;
    }
    // The decode after the first token: its wall time, and the part of it inside the session's run.
    const decodeWallMs = end - first;
    const decodeRunMs = meters.runMs - runAtFirst;
    return {
      decode_wall_ms: decodeWallMs,
      decode_run_ms: decodeRunMs,
      decode_steps: Math.max(0, n - 1),
      ttft_ms: first - t0,
      total_ms: end - t0,
      tokens: n,
      decode_tps: n > 1 && end > first ? ((n - 1) * 1000) / (end - first) : null,
      prompt_tokens: res.usage.prompt_tokens,
      cached_tokens: res.usage.prompt_tokens_details?.cached_tokens ?? 0,
      chunks,
      model_ms: meters.modelMs - m0,
      text: res.choices[0]!.message.content,
    };
  },

  /** The same through transformers.js' text-generation pipeline with a TextStreamer, greedy. */
  async baselineChat(messages: Message[], maxNew: number) {
    const m = need();
    const pipe = new TextGenerationPipeline({ task: 'text-generation', model: m.model, tokenizer: m.tokenizer } as never);
    let first = -1;
    let n = 0;
    const streamer = new TextStreamer(m.tokenizer, {
      skip_prompt: true,
      callback_function: () => {},
      token_callback_function: () => {
        if (first < 0) first = performance.now();
        n++;
      },
    });
    // Chat models get the messages (the pipeline applies the template); a model without a
    // template gets the same plain transcript the engine writes (src/engine/chat/chat-prompt.ts).
    const template = (m.tokenizer as unknown as { chat_template?: unknown }).chat_template;
    const input = typeof template === 'string' && template ? messages : plainTranscript(messages);
    const extra = typeof input === 'string' ? { add_special_tokens: true } : {};
    const m0 = meters.modelMs;
    const t0 = performance.now();
    const out = (await pipe(input as never, { max_new_tokens: maxNew, do_sample: false, streamer, return_full_text: false, ...extra } as never)) as unknown as {
      generated_text: { role: string; content: string }[] | string;
    }[];
    const end = performance.now();
    if (first < 0) first = end;
    const g = out[0]!.generated_text;
    const text = Array.isArray(g) ? (g.at(-1)?.content ?? '') : g;
    const prompt = chatPromptIds(m, messages as never);
    return {
      ttft_ms: first - t0,
      total_ms: end - t0,
      tokens: n,
      decode_tps: n > 1 && end > first ? ((n - 1) * 1000) / (end - first) : null,
      prompt_tokens: prompt.length,
      model_ms: meters.modelMs - m0,
      text,
    };
  },

  /** A greedy streamed chat from cold under `responseFormat` (null: none), with the grammar's share timed (structured-chat.ts). */
  structuredChat(messages: Message[], maxNew: number, responseFormat: unknown | null) {
    return structuredChat(needEngine(), call().id, messages, maxNew, responseFormat, () => meters.forwardMs);
  },

  /** Milliseconds of masking one step's logits (maskedArgmax) on the last constrained run's masks. */
  maskingMs() {
    return maskingMs(need().vocabSize);
  },

  /** Time of one engine chat call that writes a single token (prefill + one step), with whatever the prefix cache holds. */
  async engineFirstToken(messages: Message[]) {
    const t0 = performance.now();
    const res = await needEngine().chat({ model: 'jev', messages, max_tokens: 1, temperature: 0 }, call());
    return {
      ms: performance.now() - t0,
      prompt_tokens: res.usage.prompt_tokens,
      cached_tokens: res.usage.prompt_tokens_details?.cached_tokens ?? 0,
    };
  },
};
