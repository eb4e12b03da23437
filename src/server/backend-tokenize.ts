import type { BackendTokenization } from './backend.ts';
import type { BackendHttp } from './backend-http.ts';

/**
 * `POST /tokenize` `{model, prompt, add_special_tokens}` → `{tokens, count, max_model_len}`, the
 * same on both engines (SGLang: python/sglang/srt/entrypoints/http_server.py `openai_v1_tokenize`,
 * entrypoints/openai/serving_tokenize.py; vLLM: vllm/entrypoints/openai/protocol.py
 * `TokenizeCompletionRequest`, `TokenizeResponse`).
 */
export async function postTokenize(http: BackendHttp, model: string, text: string, signal: AbortSignal | undefined): Promise<BackendTokenization> {
  const path = '/tokenize';
  const reply = await http.postJson(path, { model, prompt: text, add_special_tokens: false }, signal);
  const tokens = (reply as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t))) throw http.badReply(path, "'tokens' is missing or not a list of token ids");
  const max = (reply as { max_model_len?: unknown }).max_model_len;
  return { ids: tokens as number[], maxModelLen: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null };
}
