/**
 * A loopback SGLang on 127.0.0.1: `POST /generate` in SGLang's shapes (GenerateReqInput,
 * python/sglang/srt/managers/io_struct.py; the response of tokenizer_manager.py), `POST /tokenize`,
 * `POST /v1/chat/completions`, over a real model (loopback-model.ts). `input_ids` is one prompt
 * (a list of ints: one result object) or a batch (a list of lists: a list of results);
 * `meta_info.input_token_logprobs` holds `[logprob, token_id, null]` for `input_ids[logprob_start_len:]`,
 * the first logprob `null`.
 */
import { chatRoute, tokenizeRoute } from './loopback-chat.ts';
import type { LoopbackModel } from './loopback-model.ts';
import { loopbackServer, type LoopbackServer } from './loopback-server.ts';

export interface EngineLoopback extends LoopbackServer {
  model: LoopbackModel;
  /** Makes /tokenize answer other ids (a tokenizer that disagrees); null: the model's own. */
  skew: ((ids: number[]) => number[]) | null;
}

export async function sglangLoopback(model: LoopbackModel): Promise<EngineLoopback> {
  let rid = 0;
  let loopback: EngineLoopback;
  const server = await loopbackServer({
    '/generate': async (body) => {
      const raw = body['input_ids'];
      if (!Array.isArray(raw) || raw.length === 0) throw new Error('input_ids is required');
      const batch = Array.isArray(raw[0]);
      const prompts = (batch ? raw : [raw]) as number[][];
      const startsRaw = body['logprob_start_len'] ?? -1;
      const starts = prompts.map((_, i) => (Array.isArray(startsRaw) ? (startsRaw[i] as number) : (startsRaw as number)));
      const params = (body['sampling_params'] ?? {}) as Record<string, unknown>;
      if (body['return_logprob'] !== true) throw new Error('this loopback answers return_logprob requests only');
      if (params['max_new_tokens'] !== 0) throw new Error('this loopback answers max_new_tokens: 0 only');
      prompts.forEach((ids, i) => {
        if (!(starts[i]! >= 0 && starts[i]! < ids.length)) throw new Error(`logprob_start_len ${starts[i]} is out of range for ${ids.length} tokens`);
      });
      const computed = await model.promptLogProbs(prompts.map((ids, i) => ({ ids, from: starts[i]! + 1 })));
      const results = prompts.map((ids, i) => {
        const start = starts[i]!;
        const { logprobs } = computed[i]!;
        return {
          text: '',
          output_ids: [],
          meta_info: {
            id: `${++rid}`,
            finish_reason: { type: 'length', length: 0 },
            prompt_tokens: ids.length,
            completion_tokens: 0,
            cached_tokens: 0,
            input_token_logprobs: [[null, ids[start], null], ...logprobs.map((lp, j) => [lp, ids[start + 1 + j], null])],
            output_token_logprobs: [],
          },
        };
      });
      return batch ? results : results[0];
    },
    '/tokenize': tokenizeRoute(model, () => loopback.skew),
    '/v1/chat/completions': chatRoute(model, ''),
  });
  loopback = Object.assign(server, { model, skew: null });
  return loopback;
}
