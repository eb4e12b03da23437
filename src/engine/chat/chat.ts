import { customAlphabet } from 'nanoid';
import { enableThinkingFor, type ChatCompletion, type ChatCompletionChunk, type ChatRequest } from '../../contract/index.ts';
import { fitConversation } from './chat-prompt.ts';
import { promptOpensThink, ReasoningSplitter, templateThinks } from './chat-reasoning.ts';
import { chatTemplateOf } from '../model/chat-template.ts';
import { LanguageModel } from '../model/language-model.ts';
import { modelVersion } from '../model/model-version.ts';
import { continueFrom, keepCache, startFrom, type PrefixCache } from '../model/prefix-cache.ts';
import { sampleToken } from './sampler.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import { TextStream } from './text-stream.ts';

const completionId = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 29);

type TokenLogprob = NonNullable<ChatCompletion['choices'][number]['logprobs']>['content'][number];

export interface CompleteOptions {
  signal?: AbortSignal | undefined;
  onChunk?: ((chunk: ChatCompletionChunk) => void | Promise<void>) | undefined;
  /** Caches of earlier requests' prompts and replies (null: every request starts cold). */
  prefixes: PrefixCache | null;
}

/**
 * Generates the assistant's reply token by token, over forward passes driven by hand: the
 * longest prefix held in the prefix cache is reused (the previous turn of this conversation, or
 * the system prompt another conversation shares), each step reads one
 * token's logits, and the signal is checked between tokens. Each chunk is awaited: across a
 * worker boundary that keeps chunks ahead of the final result, and gives backpressure.
 * Generation stops on any of the model's stop tokens (`stopTokenIds`). With a template that
 * thinks (Qwen3), the `<think>` block is returned apart as `reasoning_content`.
 */
export async function complete(lm: LanguageModel, request: ChatRequest, options: CompleteOptions): Promise<ChatCompletion> {
  const { signal, onChunk, prefixes } = options;
  const reserve = request.max_tokens ?? 1;
  const enableThinking = enableThinkingFor(request.reasoning_effort);
  const { ids: prompt, text: promptText } = fitConversation(lm, request.messages, reserve, request.truncation, { enableThinking });
  const splitter = templateThinks(chatTemplateOf(lm.tokenizer)) ? new ReasoningSplitter(promptOpensThink(promptText)) : null;
  const maxNew = Math.min(request.max_tokens ?? Infinity, lm.contextLength - prompt.length);
  const id = `chatcmpl-${completionId()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = modelVersion(lm);
  const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: 'stop' | 'length' | null, logprobs: TokenLogprob[] | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: logprobs ? { content: logprobs } : null }],
    ...(request.include_usage ? { usage: null } : {}),
  });

  signal?.throwIfAborted();
  const eos = stopTokenIds(lm);
  const random = seededRandom(request.seed ?? randomSeed());
  const stream = new TextStream((ids) => lm.tokenizer.decode(ids, { skip_special_tokens: true }), request.stop);
  const generated: number[] = [];
  const logprobs: TokenLogprob[] = [];
  let finish: 'stop' | 'length' = 'length';
  /** A text piece as a delta: answer and reasoning apart where the model thinks; null when empty. */
  const pieceDelta = (piece: string, end = false): ChatCompletionChunk['choices'][number]['delta'] | null => {
    if (!splitter) return piece ? { content: piece } : null;
    const split = splitter.push(piece);
    if (end) {
      const last = splitter.flush();
      split.reasoning += last.reasoning;
      split.content += last.content;
    }
    const delta: ChatCompletionChunk['choices'][number]['delta'] = {};
    if (split.reasoning) delta.reasoning_content = split.reasoning;
    if (split.content) delta.content = split.content;
    return split.reasoning || split.content ? delta : null;
  };

  const start = startFrom(prefixes, lm, prompt, prompt.length - 1);
  const fed = prompt.slice(0, start.reused);
  let pass = await continueFrom(prefixes, lm, start, fed, prompt.slice(start.reused));
  fed.push(...prompt.slice(start.reused));
  let cache = pass.cache;
  await onChunk?.(chunk({ role: 'assistant', content: '' }, null));
  // Greedy without logprobs needs only the argmax of the raw logits, which is the argmax of their
  // log-softmax: skipping the full-vocabulary float64 log-softmax saves ~1–2 ms a token
  // (profiled in docs/benchmarks.md), the same token every time.
  const greedyOnly = request.temperature === 0 && !request.logprobs;
  try {
    for (;;) {
      const logp = greedyOnly ? null : LanguageModel.logProbsAt(pass.logits, -1);
      const best = greedyOnly ? LanguageModel.argmaxAt(pass.logits, -1) : -1;
      pass.logits.dispose();
      if (generated.length >= maxNew) break;
      signal?.throwIfAborted();
      const token = logp ? sampleToken(logp, { temperature: request.temperature, topP: request.top_p }, random) : best;
      if (eos.has(token)) {
        finish = 'stop';
        break;
      }
      generated.push(token);
      const entry = request.logprobs && logp ? tokenLogprob(lm, token, logp, request.top_logprobs) : null;
      if (entry) logprobs.push(entry);
      const delta = pieceDelta(stream.update(generated));
      if (delta || entry) await onChunk?.(chunk(delta ?? { content: '' }, null, entry ? [entry] : null));
      if (stream.stopped) {
        finish = 'stop';
        break;
      }
      if (generated.length >= maxNew) break;
      pass = await lm.forward([token], cache, 1);
      cache.dispose();
      cache = pass.cache;
      fed.push(token);
    }
  } finally {
    // Whatever happened, the cache holds exactly `fed`: the next turn can build on it.
    keepCache(prefixes, fed, cache);
  }
  const rest = pieceDelta(stream.flush(), true);
  if (rest) await onChunk?.(chunk(rest, null));
  await onChunk?.(chunk({}, finish));
  const usage = {
    prompt_tokens: prompt.length,
    completion_tokens: generated.length,
    total_tokens: prompt.length + generated.length,
    prompt_tokens_details: { cached_tokens: start.reused },
  };
  if (request.include_usage) await onChunk?.({ id, object: 'chat.completion.chunk', created, model, choices: [], usage });
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: splitter ? { role: 'assistant', content: splitter.content, reasoning_content: splitter.reasoning } : { role: 'assistant', content: stream.text },
        finish_reason: finish,
        logprobs: request.logprobs ? { content: logprobs } : null,
      },
    ],
    usage,
  };
}

/**
 * Every token that ends the reply: generation_config.json's `eos_token_id` (a list for Llama 3,
 * Qwen and Phi-3.5), config.json's, and the tokenizer's end-of-sequence token.
 */
export function stopTokenIds(lm: LanguageModel): Set<number> {
  const ids = new Set<number>();
  const add = (x: unknown) => {
    if (typeof x === 'number') ids.add(x);
    else if (Array.isArray(x)) x.forEach(add);
  };
  add((lm.model as unknown as { generation_config?: { eos_token_id?: unknown } }).generation_config?.eos_token_id);
  add((lm.model.config as unknown as { eos_token_id?: unknown }).eos_token_id);
  add((lm.tokenizer as unknown as { eos_token_id?: unknown }).eos_token_id);
  return ids;
}

function tokenLogprob(lm: LanguageModel, token: number, logp: Float64Array, top: number): TokenLogprob {
  const describe = (t: number) => {
    const text = lm.tokenizer.decode([t], { skip_special_tokens: false });
    return { token: text, logprob: logp[t]!, bytes: Array.from(new TextEncoder().encode(text)) };
  };
  const best: number[] = [];
  if (top > 0) {
    const order = Array.from(logp.keys()).sort((a, b) => logp[b]! - logp[a]! || a - b);
    best.push(...order.slice(0, top));
  }
  return { ...describe(token), top_logprobs: best.map(describe) };
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
