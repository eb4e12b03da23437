/**
 * `POST /v1/chat/completions` of a loopback engine, answered by the project's own engine over the
 * same weights: OpenAI's shape, streamed as server-sent events with a last usage chunk when
 * `stream_options.include_usage` is asked (as both SGLang and vLLM do). A client that goes away
 * cancels the generation.
 */
import type { ChatCompletionChunk } from '../../../src/contract/index.ts';
import type { LoopbackModel } from './loopback-model.ts';
import { sseWriter, type Route } from './loopback-server.ts';

let calls = 0;

/** `idPrefix`: what the engine's completion ids begin with (vLLM `chatcmpl-`, SGLang a bare hex id). */
export function chatRoute(model: LoopbackModel, idPrefix: string): Route {
  return async (body, res) => {
    const call = { id: `loopback-${++calls}` };
    res.on('close', () => {
      if (!res.writableFinished) void model.engine.cancel(call.id);
    });
    const reid = <T extends { id: string }>(x: T): T => ({ ...x, id: `${idPrefix}${x.id.replace(/^chatcmpl-/, '')}` });
    if (body['stream'] !== true) return reid(await model.engine.chat(body, call));
    let sse: ReturnType<typeof sseWriter> | null = null;
    try {
      await model.engine.chat(body, call, (chunk: ChatCompletionChunk) => {
        sse ??= sseWriter(res);
        sse.send(reid(chunk));
      });
      (sse ?? sseWriter(res)).end();
    } catch (e) {
      if (sse) {
        (sse as ReturnType<typeof sseWriter>).send({ error: { message: (e as Error).message, type: 'InternalServerError', code: 500 } });
        (sse as ReturnType<typeof sseWriter>).end();
      } else throw e;
    }
    return undefined;
  };
}

/** `POST /tokenize` `{prompt, add_special_tokens}` → `{tokens, count, max_model_len}` (both engines); `skew` alters the ids (a different tokenizer). */
export function tokenizeRoute(model: LoopbackModel, skew: () => ((ids: number[]) => number[]) | null): Route {
  return async (body) => {
    if (typeof body['prompt'] !== 'string') throw new Error('prompt must be a string');
    const ids = model.lm.tokenizer.encode(body['prompt'], { add_special_tokens: body['add_special_tokens'] !== false });
    const tokens = skew()?.(ids) ?? ids;
    return { tokens, count: tokens.length, max_model_len: model.lm.contextLength };
  };
}
