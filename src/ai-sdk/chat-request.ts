/**
 * The AI SDK's call options (`LanguageModelV4CallOptions`) as a chat completion request in
 * OpenAI's shape, and the warnings for what the engine does not read.
 *
 * - `responseFormat` JSON with a schema → `response_format: json_schema` (enforced token by token;
 *   a schema keyword the engine cannot enforce is the client's 400 naming it); JSON without one →
 *   `json_object`.
 * - function tools → `tools`, `toolChoice` → `tool_choice`; provider-defined tools are not served
 *   (a warning).
 * - `reasoning` → `reasoning_effort` (a thinking model's template switch): `xhigh` and `max` are
 *   `high`; `provider-default` leaves the template's default.
 * - `topK`, `presencePenalty`, `frequencyPenalty`: not read by the sampler (a warning each).
 * - `providerOptions.jev`: `parallelToolCalls` (boolean) and `truncation` (`error`, `drop_oldest`),
 *   passed on as `parallel_tool_calls` and `truncation`.
 */
import type { LanguageModelV4CallOptions, SharedV4Warning } from '@ai-sdk/provider';
import type { ChatRequestInput } from '../contract/index.ts';
import { chatMessages } from './chat-prompt.ts';
import { PROVIDER_KEY } from './jev-local-client.ts';

const PROVIDER_OPTIONS: Record<string, keyof ChatRequestInput> = {
  parallelToolCalls: 'parallel_tool_calls',
  truncation: 'truncation',
};

function reasoningEffort(reasoning: LanguageModelV4CallOptions['reasoning'], warnings: SharedV4Warning[]): ChatRequestInput['reasoning_effort'] {
  switch (reasoning) {
    case undefined:
    case 'provider-default':
      return undefined;
    case 'xhigh':
    case 'max':
      warnings.push({ type: 'compatibility', feature: 'reasoning', details: `"${reasoning}" is sent as "high": a thinking model's template only turns thinking on or off.` });
      return 'high';
    default:
      return reasoning;
  }
}

export function chatRequest(options: LanguageModelV4CallOptions, modelId: string, stream: boolean): { body: ChatRequestInput; warnings: SharedV4Warning[] } {
  const warnings: SharedV4Warning[] = [];
  for (const feature of ['topK', 'presencePenalty', 'frequencyPenalty'] as const) {
    if (options[feature] !== undefined) warnings.push({ type: 'unsupported', feature });
  }
  const body: ChatRequestInput = { model: modelId, messages: chatMessages(options.prompt) };
  if (options.maxOutputTokens !== undefined) body.max_tokens = options.maxOutputTokens;
  if (options.temperature !== undefined) body.temperature = options.temperature;
  if (options.topP !== undefined) body.top_p = options.topP;
  if (options.stopSequences !== undefined && options.stopSequences.length > 0) body.stop = options.stopSequences;
  if (options.seed !== undefined) body.seed = options.seed;
  const effort = reasoningEffort(options.reasoning, warnings);
  if (effort !== undefined) body.reasoning_effort = effort;

  const format = options.responseFormat;
  if (format?.type === 'json') {
    body.response_format = format.schema
      ? {
          type: 'json_schema',
          json_schema: {
            name: format.name ?? 'response',
            ...(format.description !== undefined ? { description: format.description } : {}),
            schema: format.schema as Record<string, unknown>,
            strict: true,
          },
        }
      : { type: 'json_object' };
  }

  const tools = [];
  for (const tool of options.tools ?? []) {
    if (tool.type === 'provider') {
      warnings.push({ type: 'unsupported', feature: `provider-defined tool ${tool.id}` });
      continue;
    }
    tools.push({
      type: 'function' as const,
      function: {
        name: tool.name,
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        parameters: tool.inputSchema as Record<string, unknown>,
        ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
      },
    });
  }
  if (tools.length > 0) {
    body.tools = tools;
    const choice = options.toolChoice;
    if (choice !== undefined) body.tool_choice = choice.type === 'tool' ? { type: 'function', function: { name: choice.toolName } } : choice.type;
  }

  const given = (options.providerOptions?.[PROVIDER_KEY] ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(given)) {
    const field = PROVIDER_OPTIONS[key];
    if (field === undefined) warnings.push({ type: 'unsupported', feature: `providerOptions.${PROVIDER_KEY}.${key}` });
    else (body as Record<string, unknown>)[field] = value;
  }

  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { body, warnings };
}
