import { idsBody, itemLength, itemToken, type PromptLogProbItem } from './backend.ts';
import { JsonText, type BackendHttpOptions } from './backend-http.ts';
import { HttpServingBackend } from './http-serving-backend.ts';

/**
 * vLLM (docs/scale-out.md, "vLLM"). One decision is ONE `POST /v1/completions` whose `prompt` is
 * the batch of its continuations as token ids (vllm/entrypoints/openai/protocol.py
 * `CompletionRequest`: `prompt` may be a list of token-id lists; `prompt_logprobs` is vLLM's
 * extension):
 *
 *     { "model": M, "prompt": [[…], …], "max_tokens": 1, "temperature": 0, "prompt_logprobs": 0 }
 *
 * → `choices[i].prompt_logprobs`: a list aligned with prompt i's tokens, `null` first, then
 * `{"<token_id>": {"logprob", "rank", "decoded_token"}}` holding at least the prompt's own token.
 * `max_tokens` is 1 (SamplingParams refuses 0) and the sampled token is ignored. Each prompt is
 * prefilled whole: vLLM skips its prefix cache for requests with prompt logprobs
 * (vllm/v1/core/kv_cache_manager.py), so a decision costs one prefill per continuation.
 */
export class VllmBackend extends HttpServingBackend<'vllm'> {
  constructor(options: Omit<BackendHttpOptions, 'kind'>, model: string) {
    super('vllm', options, model);
  }

  async promptLogProbs(items: readonly PromptLogProbItem[], signal: AbortSignal | undefined): Promise<number[][]> {
    const path = '/v1/completions';
    // JSON written by hand: the state's ids once, not once per item (backend.ts `idsBody`).
    const body = idsBody(`{"model":${JSON.stringify(this.model)},"prompt":`, items, ',"max_tokens":1,"temperature":0,"prompt_logprobs":0}');
    const reply = await this.http.postJson(path, new JsonText(body), signal);
    const choices = (reply as { choices?: unknown } | null)?.choices;
    if (!Array.isArray(choices)) throw this.http.badReply(path, "'choices' is missing");
    const byIndex = new Map<number, unknown>();
    choices.forEach((c, i) => byIndex.set(typeof (c as { index?: unknown })?.index === 'number' ? (c as { index: number }).index : i, c));
    return items.map((item, i) => {
      const where = `choices[index ${i}].prompt_logprobs`;
      const entries = (byIndex.get(i) as { prompt_logprobs?: unknown } | undefined)?.prompt_logprobs;
      if (!Array.isArray(entries)) throw this.http.badReply(path, `${where} is missing`);
      const length = itemLength(item);
      if (entries.length !== length) throw this.http.badReply(path, `${where} has ${entries.length} entries, expected ${length} (one per prompt token)`);
      const out: number[] = [];
      for (let k = item.from; k < length; k++) {
        const entry = entries[k] as Record<string, { logprob?: unknown } | undefined> | null;
        const token = itemToken(item, k);
        const lp = entry?.[String(token)]?.logprob;
        if (typeof lp !== 'number') throw this.http.badReply(path, `${where}[${k}] has no logprob for token ${token}`);
        out.push(lp);
      }
      return out;
    });
  }
}
