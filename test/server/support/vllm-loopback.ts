/**
 * A loopback vLLM on 127.0.0.1: `POST /v1/completions` in vLLM's shapes (CompletionRequest with
 * token-id prompts and `prompt_logprobs`, vllm/entrypoints/openai/protocol.py), `POST /tokenize`,
 * `POST /v1/chat/completions`, over a real model (loopback-model.ts). Like vLLM with prompt
 * logprobs, every prompt is prefilled whole (no prefix reuse); `choices[i].prompt_logprobs` is
 * aligned with prompt i, `null` first, then `{"<id>": {logprob, rank, decoded_token}}`;
 * `max_tokens` must be at least 1.
 */
import { chatRoute, tokenizeRoute } from './loopback-chat.ts';
import type { LoopbackModel } from './loopback-model.ts';
import { loopbackServer } from './loopback-server.ts';
import type { EngineLoopback } from './sglang-loopback.ts';

export async function vllmLoopback(model: LoopbackModel): Promise<EngineLoopback> {
  let n = 0;
  let loopback: EngineLoopback;
  const decode = (t: number) => model.lm.tokenizer.decode([t], { skip_special_tokens: false });
  const server = await loopbackServer({
    '/v1/completions': async (body) => {
      const raw = body['prompt'];
      if (!Array.isArray(raw) || raw.length === 0) throw new Error('prompt is required');
      const prompts = (Array.isArray(raw[0]) ? raw : [raw]) as number[][];
      if (!prompts.every((p) => Array.isArray(p) && p.every(Number.isInteger))) throw new Error('this loopback answers token-id prompts only');
      const maxTokens = body['max_tokens'];
      if (typeof maxTokens === 'number' && maxTokens < 1) throw new Error(`max_tokens must be at least 1, got ${maxTokens}.`);
      const wanted = body['prompt_logprobs'];
      if (typeof wanted !== 'number' || wanted < 0) throw new Error('this loopback answers prompt_logprobs requests only');
      // Every prompt whole and on its own, as vLLM prefills a request with prompt logprobs.
      const computed: Awaited<ReturnType<LoopbackModel['promptLogProbs']>> = [];
      for (const ids of prompts) computed.push((await model.promptLogProbs([{ ids, from: 1 }]))[0]!);
      return {
        id: `cmpl-${++n}`,
        object: 'text_completion',
        created: Math.floor(Date.now() / 1000),
        model: body['model'],
        choices: prompts.map((ids, i) => ({
          index: i,
          text: decode(computed[i]!.next),
          logprobs: null,
          finish_reason: 'length',
          stop_reason: null,
          prompt_logprobs: [
            null,
            ...computed[i]!.logprobs.map((logprob, k) => ({ [String(ids[k + 1])]: { logprob, rank: computed[i]!.ranks[k], decoded_token: decode(ids[k + 1]!) } })),
          ],
        })),
        usage: { prompt_tokens: prompts.reduce((s, p) => s + p.length, 0), completion_tokens: prompts.length, total_tokens: prompts.reduce((s, p) => s + p.length + 1, 0) },
      };
    },
    '/tokenize': tokenizeRoute(model, () => loopback.skew),
    '/v1/chat/completions': chatRoute(model, 'chatcmpl-'),
  });
  loopback = Object.assign(server, { model, skew: null });
  return loopback;
}
