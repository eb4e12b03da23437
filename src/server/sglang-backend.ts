import { idsBody, itemLength, itemToken, type PromptLogProbItem } from './backend.ts';
import { JsonText, type BackendHttpOptions } from './backend-http.ts';
import { HttpServingBackend } from './http-serving-backend.ts';

/**
 * SGLang (docs/scale-out.md, "SGLang"). One decision is ONE `POST /generate` whose `input_ids` is
 * the batch of its continuations (GenerateReqInput, python/sglang/srt/managers/io_struct.py):
 *
 *     { "input_ids": [[…], …], "return_logprob": true, "logprob_start_len": [L, …],
 *       "sampling_params": { "max_new_tokens": 0 }, "return_text_in_logprobs": false }
 *
 * → a list, one object per item: `meta_info.input_token_logprobs` is a list of
 * `[logprob, token_id, text|null]` for the tokens `input_ids[L:]`, the first one's logprob `null`
 * (the scheduler pads it: scheduler_output_processor_mixin.py; tokenizer_manager.py
 * `add_logprob_to_meta_info`). So L = from − 1. The items share the state's tokens, and SGLang's
 * radix cache (with the cache-aware `--schedule-policy lpm`, whose in-batch prefix caching
 * schedules one and lets the rest reuse it) computes the shared part once.
 */
export class SglangBackend extends HttpServingBackend<'sglang'> {
  constructor(options: Omit<BackendHttpOptions, 'kind'>, model: string) {
    super('sglang', options, model);
  }

  async promptLogProbs(items: readonly PromptLogProbItem[], signal: AbortSignal | undefined): Promise<number[][]> {
    const path = '/generate';
    // JSON written by hand: the state's ids once, not once per item (backend.ts `idsBody`).
    const body = idsBody(
      '{"input_ids":',
      items,
      `,"return_logprob":true,"logprob_start_len":[${items.map((it) => it.from - 1).join(',')}],"return_text_in_logprobs":false,` +
        `"sampling_params":{"max_new_tokens":0},"stream":false}`,
    );
    const reply = await this.http.postJson(path, new JsonText(body), signal);
    if (!Array.isArray(reply) || reply.length !== items.length) {
      throw this.http.badReply(path, `expected a list of ${items.length} results (one per input_ids), got ${Array.isArray(reply) ? `${reply.length}` : typeof reply}`);
    }
    return items.map((item, i) => {
      const entries = (reply[i] as { meta_info?: { input_token_logprobs?: unknown } } | null)?.meta_info?.input_token_logprobs;
      const where = `result ${i}: meta_info.input_token_logprobs`;
      const expected = itemLength(item) - (item.from - 1);
      if (!Array.isArray(entries)) throw this.http.badReply(path, `${where} is missing`);
      if (entries.length !== expected) throw this.http.badReply(path, `${where} has ${entries.length} entries, expected ${expected} (input_ids[logprob_start_len:])`);
      const out: number[] = [];
      for (let j = 1; j < entries.length; j++) {
        const entry = entries[j] as unknown;
        const k = item.from - 1 + j;
        const token = itemToken(item, k);
        if (!Array.isArray(entry) || typeof entry[0] !== 'number' || entry[1] !== token) {
          throw this.http.badReply(path, `${where}[${j}] is not [logprob, ${token}, text] (the token at position ${k})`);
        }
        out.push(entry[0]);
      }
      return out;
    });
  }
}
