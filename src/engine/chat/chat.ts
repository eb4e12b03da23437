import { customAlphabet } from 'nanoid';
import { enableThinkingFor, JevError, type ChatCompletion, type ChatCompletionChunk, type ChatRequest } from '../../contract/index.ts';
import { fitConversation } from './chat-prompt.ts';
import { promptOpensThink, ReasoningSplitter, templateThinks } from './chat-reasoning.ts';
import { constraintStart, maskLogProbs, ReplyConstraint } from './constraint.ts';
import { atRequestPath, grammarFormat } from './request-grammar.ts';
import type { GrammarCache } from '../grammar/grammar-cache.ts';
import { chatTemplateOf } from '../model/chat-template.ts';
import { LanguageModel } from '../model/language-model.ts';
import { modelVersion } from '../model/model-version.ts';
import { continueFrom, keepCache, startFrom, type PrefixCache } from '../model/prefix-cache.ts';
import { greedyCandidates, gumbelScores, maskedArgmax, sampleToken } from './sampler.ts';
import { seededRandom } from '../runtime/seeded-random.ts';
import { stopTokenIds, stopTokenTexts } from './stop-tokens.ts';
import { TextStream } from './text-stream.ts';
import { ToolCallStream } from './tool-call-stream.ts';
import { toolCallPlan, toolStyleOf } from './tool-format.ts';


/** How many candidates a step under a grammar offers its matcher before it fills a mask (constraint.ts, `take`). */
const CANDIDATES = 16;
export { stopTokenIds } from './stop-tokens.ts';

const ALPHANUMERIC = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';
const completionId = customAlphabet(ALPHANUMERIC, 29);
const callId = customAlphabet(ALPHANUMERIC, 24);

type TokenLogprob = NonNullable<ChatCompletion['choices'][number]['logprobs']>['content'][number];
type Delta = ChatCompletionChunk['choices'][number]['delta'];
type Finish = 'stop' | 'length' | 'tool_calls';

export interface CompleteOptions {
  signal?: AbortSignal | undefined;
  onChunk?: ((chunk: ChatCompletionChunk) => void | Promise<void>) | undefined;
  /** Caches of earlier requests' prompts and replies (null: every request starts cold). */
  prefixes: PrefixCache | null;
  /** Compiled grammars, for a request with a `response_format` other than text (grammar/). */
  grammars?: GrammarCache | undefined;
}

/**
 * Generates the assistant's reply token by token, over forward passes driven by hand: the
 * longest prefix held in the prefix cache is reused (the previous turn of this conversation, or
 * the system prompt another conversation shares), each step reads one
 * token's logits, and the signal is checked between tokens. Each chunk is awaited: across a
 * worker boundary that keeps chunks ahead of the final result, and gives backpressure.
 * Generation stops on any of the model's stop tokens (`stopTokenIds`) and, unconstrained, on
 * their texts spelled out. With a template that thinks (Qwen3), the `<think>` block is returned
 * apart as `reasoning_content`. With a `response_format`, each token is drawn under its grammar
 * (constraint.ts). With tools (tool_choice other than "none"), the model's template renders them
 * (tool-prompt.ts), the calls are written under a grammar of the model's call format
 * (tool-format.ts), and they are read out of the reply as it streams (tool-call-stream.ts).
 */
export async function complete(lm: LanguageModel, request: ChatRequest, options: CompleteOptions): Promise<ChatCompletion> {
  const { signal, onChunk, prefixes } = options;
  const template = chatTemplateOf(lm.tokenizer);
  const plan = toolCallPlan(toolStyleOf(template), request.tools, request.tool_choice, request.parallel_tool_calls);
  const reserve = request.max_tokens ?? 1;
  const enableThinking = enableThinkingFor(request.reasoning_effort);
  const { ids: prompt, text: promptText } = fitConversation(lm, request.messages, reserve, request.truncation, { enableThinking, tools: plan ? request.tools : null });
  const thinks = templateThinks(template);
  const splitter = thinks ? new ReasoningSplitter(promptOpensThink(promptText)) : null;
  const maxNew = Math.min(request.max_tokens ?? Infinity, lm.contextLength - prompt.length);
  const id = `chatcmpl-${completionId()}`;
  const created = Math.floor(Date.now() / 1000);
  const model = modelVersion(lm);
  const chunk = (delta: Delta, finish: Finish | null, logprobs: TokenLogprob[] | null = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: logprobs ? { content: logprobs } : null }],
    ...(request.include_usage ? { usage: null } : {}),
  });

  signal?.throwIfAborted();
  const eos = stopTokenIds(lm);
  const format = grammarFormat(request, plan);
  if (format && !options.grammars) {
    const param = plan ? 'tools' : 'response_format';
    throw new JevError('unprocessable', `This engine has no grammar backend: ${plan ? 'tool_choice must be "none"' : 'response_format must be "text"'}.`, { param });
  }
  // Under a JSON grammar the matcher says where the reply ends: a stop token's text inside a JSON
  // string is text. Free text around tool calls ends on them as unconstrained text does.
  const freeText = format === null || (format.type === 'tool_calls' && !format.forced && format.answer === null);
  const stops = freeText ? [...request.stop, ...stopTokenTexts(lm, eos)] : request.stop;
  const calls = plan ? new ToolCallStream(plan.calls, () => `call_${callId()}`) : null;
  const constraint = format ? await ReplyConstraint.open(options.grammars!, lm, format, eos, constraintStart(thinks, promptText)).catch((e: unknown) => Promise.reject(atRequestPath(e, request, plan))) : null;
  try {
    const random = seededRandom(request.seed ?? randomSeed());
    const stream = new TextStream<TokenLogprob>((ids) => lm.tokenizer.decode(ids, { skip_special_tokens: true }), stops);
    const generated: number[] = [];
    const logprobs: TokenLogprob[] = [];
    let finish: Finish = 'length';
    /** A text piece as a delta: answer and reasoning apart where the model thinks; null when empty. */
    const pieceDelta = (piece: string, end = false): Delta | null => {
      const split = { reasoning: '', content: piece };
      if (splitter) {
        Object.assign(split, splitter.push(piece));
        if (end) {
          const last = splitter.flush();
          split.reasoning += last.reasoning;
          split.content += last.content;
        }
      }
      const delta: Delta = {};
      if (split.reasoning) delta.reasoning_content = split.reasoning;
      if (calls) {
        const out = calls.push(split.content);
        if (end) {
          const last = calls.flush(finish === 'length');
          out.content += last.content;
          out.toolCalls.push(...last.toolCalls);
        }
        if (out.content) delta.content = out.content;
        if (out.toolCalls.length > 0) delta.tool_calls = out.toolCalls;
      } else if (split.content) delta.content = split.content;
      return Object.keys(delta).length > 0 ? delta : null;
    };
    const emit = async (out: { text: string; items: TokenLogprob[] }, end = false) => {
      logprobs.push(...out.items);
      const delta = pieceDelta(out.text, end);
      const entries = request.logprobs && out.items.length > 0 ? out.items : null;
      if (delta || entries) await onChunk?.(chunk(delta ?? { content: '' }, null, entries));
    };

    const start = startFrom(prefixes, lm, prompt, prompt.length - 1);
    const fed = prompt.slice(0, start.reused);
    let pass = await continueFrom(prefixes, lm, start, fed, prompt.slice(start.reused));
    fed.push(...prompt.slice(start.reused));
    let cache = pass.cache;
    await onChunk?.(chunk({ role: 'assistant', content: '' }, null));
    // Without logprobs the sampler reads the row of raw logits in place, under the grammar's mask:
    // greedy is their (allowed) argmax, which is the argmax of their log-softmax, and a draw at a
    // temperature is the same from either, as a softmax does not change when every value moves by
    // one constant. Skipping the full-vocabulary float64 log-softmax, and the row's copy, saves
    // ~5 ms a token at 150k tokens (docs/benchmarks.md). Logprobs need the log-softmax, masked and
    // renormalized.
    const params = { temperature: request.temperature, topP: request.top_p };
    // Under a grammar, greedy and top_p 1 without logprobs: each step offers the matcher a few
    // candidates before a mask is filled (constraint.ts, `take`); logprobs and a nucleus need the mask.
    const offers = constraint !== null && !request.logprobs && (params.temperature === 0 || params.topP >= 1);
    if (offers) constraint.offerCandidates();
    let perturbed: Float64Array | null = null;
    try {
      for (;;) {
        if (generated.length >= maxNew) {
          pass.logits.dispose();
          break;
        }
        let token = -1;
        // A sampled step that may offer candidates draws by the Gumbel-max trick (sampler.ts,
        // `gumbelScores`): the same token whether its matcher takes a candidate or a mask is filled.
        let scores: Float64Array | null = null;
        if (offers) {
          const row = LanguageModel.logitsAt(pass.logits, -1);
          if (params.temperature > 0) scores = gumbelScores(row, params.temperature, (random() * 2 ** 32) >>> 0, (perturbed ??= new Float64Array(row.length)));
          const ranked = scores ?? row;
          token = await constraint.take(() => greedyCandidates(ranked, CANDIDATES));
        }
        const mask = constraint && token < 0 ? await constraint.nextMask() : null;
        let logp: Float64Array | null = null;
        if (token >= 0) {
          // Taken from the candidates.
        } else if (scores) token = maskedArgmax(scores, mask!);
        else if (request.logprobs) {
          logp = LanguageModel.logProbsAt(pass.logits, -1);
          if (mask) maskLogProbs(logp, mask);
          token = sampleToken(logp, params, random);
        } else token = sampleToken(LanguageModel.logitsAt(pass.logits, -1), params, random, mask);
        pass.logits.dispose();
        signal?.throwIfAborted();
        if (eos.has(token)) {
          finish = 'stop';
          break;
        }
        generated.push(token);
        const entry = request.logprobs && logp ? tokenLogprob(lm, token, logp, request.top_logprobs) : null;
        const out = entry ? stream.update(generated, entry) : stream.update(generated);
        constraint?.accept(token, stream.text);
        await emit(out);
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
    await emit(stream.flush(), true);
    const toolCalls = calls && calls.toolCalls.length > 0 ? calls.toolCalls.map((c) => ({ ...c, function: { ...c.function } })) : null;
    // A reply that ended inside a call keeps finish_reason "length" (its last arguments cut).
    if (toolCalls && finish === 'stop' && !calls!.inCall) finish = 'tool_calls';
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
          message: {
            role: 'assistant',
            content: calls ? calls.content : splitter ? splitter.content : stream.text,
            ...(splitter ? { reasoning_content: splitter.reasoning } : {}),
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: finish,
          logprobs: request.logprobs ? { content: logprobs } : null,
        },
      ],
      usage,
    };
  } finally {
    constraint?.dispose();
  }
}

function tokenLogprob(lm: LanguageModel, token: number, logp: Float64Array, top: number): TokenLogprob {
  const describe = (t: number) => {
    const text = lm.tokenizer.decode([t], { skip_special_tokens: false });
    return { token: text, logprob: logp[t]!, bytes: Array.from(new TextEncoder().encode(text)) };
  };
  const best: number[] = [];
  if (top > 0) {
    const order = Array.from(logp.keys()).sort((a, b) => logp[b]! - logp[a]! || a - b);
    // Under a grammar, only allowed tokens are alternatives.
    best.push(...order.slice(0, top).filter((t) => logp[t] !== -Infinity));
  }
  return { ...describe(token), top_logprobs: best.map(describe) };
}

function randomSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0]!;
}
