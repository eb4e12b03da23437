/**
 * The worker side of the `structured` rows (bench/lib/structured-rows.ts): one greedy streamed
 * chat through `Engine.chat`, under a `response_format` or without one, from cold (prefix cache
 * cleared), timed here with performance.now(). The grammar's share is timed by wrapping the
 * engine's grammar cache (src/engine/grammar/grammar-cache.ts), as the bench wraps
 * LanguageModel.forward: `grammar_ms` is the lookup or compile of the request's grammar and its
 * matcher's creation, `fill_ms` every `fillNextTokenBitmask` (xgrammar's mask ANDed with the
 * vocabulary's JSON-safe mask), `accept_ms` the matcher taking each drawn token. The masking of
 * the logits (chat/sampler.ts `maskedArgmax`, the greedy path) is timed apart, on the masks
 * this run filled (`maskingMs`).
 */
import type { ChatCompletionChunk } from '../../src/contract/index.ts';
import { maskedArgmax } from '../../src/engine/chat/sampler.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { GrammarCache } from '../../src/engine/grammar/grammar-cache.ts';

type Message = { role: 'system' | 'user' | 'assistant'; content: string };

/** What the wrapped grammar cache measured since the last `take`. */
const grammarTimes = { grammar_ms: 0, fill_ms: 0, fills: 0, accept_ms: 0 };
/** A few masks of the last constrained run, copied, for the masking's own timing. */
let lastMasks: Int32Array[] = [];
const wrapped = new WeakSet<GrammarCache>();

function timeGrammars(cache: GrammarCache): void {
  if (wrapped.has(cache)) return;
  wrapped.add(cache);
  const grammar = cache.grammar.bind(cache);
  const matcher = cache.matcher.bind(cache);
  cache.grammar = async (...args) => {
    const t0 = performance.now();
    try {
      return await grammar(...args);
    } finally {
      grammarTimes.grammar_ms += performance.now() - t0;
    }
  };
  cache.matcher = async (...args) => {
    const t0 = performance.now();
    const inner = await matcher(...args);
    grammarTimes.grammar_ms += performance.now() - t0;
    return {
      ...inner,
      fillNextTokenBitmask: async (mask: Int32Array) => {
        const t = performance.now();
        await inner.fillNextTokenBitmask(mask);
        grammarTimes.fill_ms += performance.now() - t;
        grammarTimes.fills++;
        if (lastMasks.length < 32) lastMasks.push(mask.slice());
      },
      accept: (token: number) => {
        const t = performance.now();
        try {
          return inner.accept(token);
        } finally {
          grammarTimes.accept_ms += performance.now() - t;
        }
      },
      isTerminated: () => inner.isTerminated(),
      dispose: () => inner.dispose(),
    };
  };
}

export interface StructuredChatTimes {
  ttft_ms: number;
  total_ms: number;
  /** Tokens written, and milliseconds per token after the first. */
  tokens: number;
  ms_per_token: number | null;
  /** Of which the forward passes, and everything else. */
  forward_ms_per_token: number | null;
  other_ms_per_token: number | null;
  prompt_tokens: number;
  finish: string | null;
  /** The grammar's lookup (or compile) and matcher, and the mask fills, during this call. */
  grammar_ms: number;
  /** grammar_ms and the fills up to the first content chunk. */
  grammar_first_token_ms: number;
  fill_ms: number;
  fills: number;
  /** The matcher taking each drawn token. */
  accept_ms: number;
  text: string;
}

/**
 * `forwardMs`: the bench worker's running total of LanguageModel.forward time, read at the first
 * token and at the end, so that a decode step's time outside the forward pass (`other_ms_per_token`:
 * masking, drawing, text, chunks) is known apart from the pass that other load stretches most.
 */
export async function structuredChat(engine: Engine, id: string, messages: Message[], maxNew: number, responseFormat: unknown | null, forwardMs: () => number): Promise<StructuredChatTimes> {
  timeGrammars(engine.grammars);
  await engine.clearCache();
  grammarTimes.grammar_ms = 0;
  grammarTimes.fill_ms = 0;
  grammarTimes.fills = 0;
  grammarTimes.accept_ms = 0;
  lastMasks = [];
  let first = -1;
  let beforeFirst = 0;
  let forwardAtFirst = 0;
  const t0 = performance.now();
  const res = await engine.chat(
    { model: 'jev', messages, max_tokens: maxNew, temperature: 0, stream: true, ...(responseFormat ? { response_format: responseFormat } : {}) },
    { id },
    (chunk: ChatCompletionChunk) => {
      if (first < 0 && chunk.choices[0]?.delta?.content) {
        first = performance.now();
        forwardAtFirst = forwardMs();
        beforeFirst = grammarTimes.grammar_ms + grammarTimes.fill_ms;
      }
    },
  );
  const end = performance.now();
  const decodeForward = first < 0 ? 0 : forwardMs() - forwardAtFirst;
  if (first < 0) first = end;
  const n = res.usage.completion_tokens;
  return {
    ttft_ms: first - t0,
    total_ms: end - t0,
    tokens: n,
    ms_per_token: n > 1 ? (end - first) / (n - 1) : null,
    forward_ms_per_token: n > 1 ? decodeForward / (n - 1) : null,
    other_ms_per_token: n > 1 ? (end - first - decodeForward) / (n - 1) : null,
    prompt_tokens: res.usage.prompt_tokens,
    finish: res.choices[0]!.finish_reason,
    grammar_ms: grammarTimes.grammar_ms,
    grammar_first_token_ms: first === end ? grammarTimes.grammar_ms + grammarTimes.fill_ms : beforeFirst,
    fill_ms: grammarTimes.fill_ms,
    fills: grammarTimes.fills,
    accept_ms: grammarTimes.accept_ms,
    text: res.choices[0]!.message.content ?? '',
  };
}

/** Milliseconds of one `maskedArgmax` over a logits row of `width`, on the masks of the last constrained run. */
export function maskingMs(width: number, rounds = 20): number {
  if (!lastMasks.length) return 0;
  const row = new Float32Array(width);
  for (let i = 0; i < width; i++) row[i] = Math.sin(i * 12.9898) * 10;
  let sink = 0;
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) for (const mask of lastMasks) sink += maskedArgmax(row, mask);
  const ms = (performance.now() - t0) / (rounds * lastMasks.length);
  return sink < 0 ? -1 : ms;
}
