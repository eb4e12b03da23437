/**
 * Prefill and decode speed of a running jev-local server, timed as served: chat completions over
 * HTTP, greedy, on prompts never seen before (so that the prefix cache skips nothing). Used by the
 * embedded serve rows (embedded-serve-rows.ts) and the CUDA check (bench/gpu/cuda.ts).
 *
 * Prefill tok/s: prompt tokens ÷ the time of a reply of one token. Decode tok/s: the time of
 * 1 + DECODE_TOKENS generated tokens minus the time of 1, over DECODE_TOKENS (both prompts fresh
 * and of the same length). Medians over `reps`, after one untimed warm-up.
 */
import { round } from './measure.ts';
import { median } from './schema.ts';

/** Words in a prompt: ~380 tokens of smollm2's tokenizer (each row records its `prefill_tokens`). */
export const PROMPT_WORDS = 128;
export const DECODE_TOKENS = 32;
const WORDS = 'river stone lamp garden window paper silver morning cloud bread music candle forest letter orange bridge'.split(' ');

/** A prompt of `tokens` words never used before (`seed` varies it), so that no prefix cache holds it. */
export function freshPrompt(seed: number, tokens: number): string {
  return Array.from({ length: tokens }, (_, i) => WORDS[(seed * 7 + i * 13 + Math.floor(i / 16) * seed) % WORDS.length]).join(' ') + ` (${seed})`;
}

export interface ServedSpeed {
  prefill_tokens: number;
  prefill_tok_s: number;
  decode_tokens: number;
  decode_tok_s: number;
}

/** One greedy chat completion of `maxTokens` on a fresh prompt: its time and usage. */
async function timedChat(url: string, seed: number, maxTokens: number): Promise<{ ms: number; prompt_tokens: number; completion_tokens: number }> {
  const body = { model: 'jev', messages: [{ role: 'user', content: freshPrompt(seed, PROMPT_WORDS) }], max_tokens: maxTokens, temperature: 0, stop: [] };
  const t = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const reply = (await res.json()) as { usage?: { prompt_tokens: number; completion_tokens: number } };
  if (res.status !== 200 || !reply.usage) throw new Error(`served timing: chat answered ${res.status}: ${JSON.stringify(reply)}`);
  return { ms: performance.now() - t, ...reply.usage };
}

/** Prefill and decode tok/s of the server at `url` (medians over `reps`). */
export async function servedSpeed(url: string, reps: number): Promise<ServedSpeed> {
  await timedChat(url, 0, 2); // warm-up, untimed
  const prefill: number[] = [];
  const decode: number[] = [];
  let promptTokens = 0;
  let decoded = 0;
  for (let rep = 0; rep < reps; rep++) {
    const one = await timedChat(url, 1000 + rep, 1);
    const many = await timedChat(url, 2000 + rep, 1 + DECODE_TOKENS);
    promptTokens = one.prompt_tokens;
    decoded = many.completion_tokens - one.completion_tokens;
    prefill.push(one.prompt_tokens / (one.ms / 1000));
    if (decoded > 0) decode.push(decoded / (Math.max(1e-3, many.ms - one.ms) / 1000));
  }
  return {
    prefill_tokens: promptTokens,
    prefill_tok_s: round(median(prefill), 1),
    decode_tokens: decoded,
    decode_tok_s: decode.length ? round(median(decode), 1) : 0,
  };
}
