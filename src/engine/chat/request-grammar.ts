/**
 * The grammar a chat request asks for (its tool calls, with the response format as the other
 * answer, or its response_format), compiled ahead of the request's turn in the engine's queue
 * (`warmGrammar`, engine.ts): a compile runs on a grammar worker for as long as its bound allows
 * (grammar/worker-grammar-backend.ts), while the engine serves the requests before it. A 422
 * `schema_too_complex` is named at the request's own path: the response format's schema, or the
 * tool's parameters (`tools[k].function.parameters…`).
 */
import { JevError, validationMessage, type ChatRequest } from '../../contract/index.ts';
import type { GrammarFormat } from '../grammar/backend.ts';
import type { GrammarCache } from '../grammar/grammar-cache.ts';
import { chatTemplateOf } from '../model/chat-template.ts';
import type { LanguageModel } from '../model/language-model.ts';
import { stopTokenIds } from './stop-tokens.ts';
import { toolCallFormat, toolCallPlan, toolStyleOf, type ToolCallPlan } from './tool-format.ts';

/** The request's tool-call plan for `lm`'s template (null: it calls no tool). */
export function requestToolPlan(lm: LanguageModel, request: ChatRequest): ToolCallPlan | null {
  return toolCallPlan(toolStyleOf(chatTemplateOf(lm.tokenizer)), request.tools, request.tool_choice, request.parallel_tool_calls);
}

/** The grammar a request asks for: its tool calls (with the response format as the other answer), its response_format, or null for text. */
export function grammarFormat(request: ChatRequest, plan: ToolCallPlan | null): GrammarFormat | null {
  const f = request.response_format;
  const answer = f.type === 'json_object' ? { type: 'object' } : f.type === 'json_schema' ? f.json_schema.schema : null;
  if (plan) return toolCallFormat(plan, answer);
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema') return { type: 'json_schema', schema: f.json_schema.schema };
  return null;
}

/** Compiles the request's grammar into `grammars` (nothing where it has none, or where it is there already). */
export async function warmGrammar(lm: LanguageModel, request: ChatRequest, grammars: GrammarCache): Promise<void> {
  const plan = requestToolPlan(lm, request);
  const format = grammarFormat(request, plan);
  if (!format) return;
  try {
    await grammars.warm(grammars.vocabulary(lm, stopTokenIds(lm)), format);
  } catch (e) {
    throw atRequestPath(e, request, plan);
  }
}

/** A `schema_too_complex` from the grammar room, its `param` rewritten from the format's parts (`calls[i]`, `answer`) to the request's paths. */
export function atRequestPath(e: unknown, request: ChatRequest, plan: ToolCallPlan | null): unknown {
  if (!JevError.is(e) || e.code !== 'schema_too_complex' || !e.param || !plan) return e;
  const call = /^calls\[(\d+)\]/.exec(e.param);
  let param = e.param;
  if (call) {
    const name = plan.calls[Number(call[1])]?.name;
    const k = request.tools.findIndex((t) => t.function.name === name);
    param = `tools[${k}].function.parameters${e.param.slice(call[0].length)}`;
  } else if (e.param.startsWith('answer')) param = `response_format.json_schema.schema${e.param.slice('answer'.length)}`;
  const why = typeof e.details?.['why'] === 'string' ? e.details['why'] : e.message;
  return new JevError('schema_too_complex', validationMessage('schemaTooComplex', param, [why]), { param, details: e.details, cause: e });
}
