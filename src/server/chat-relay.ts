import { createParser, type EventSourceParser } from 'eventsource-parser';
import {
  enableThinkingFor,
  errorMessages,
  JevError,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatRequest,
} from '../contract/index.ts';
import type { ServingBackend } from './backend.ts';

/** Fields of the original body relayed as they came (a colleague's contract work reads them too): structured output and tools. */
export const PASSTHROUGH_FIELDS = ['response_format', 'tools', 'tool_choice', 'parallel_tool_calls'] as const;

const PATH = '/v1/chat/completions';

export interface RelayOptions {
  /** The model's name on the engine. */
  backendModel: string;
  /** The `model` of our responses (servedModelVersion). */
  version: string;
  signal: AbortSignal;
  onChunk?: ((chunk: ChatCompletionChunk) => void | Promise<void>) | undefined;
}

/**
 * A chat completion relayed to the engine's `/v1/chat/completions`, after our validation
 * (`request` is parseChatRequest's): the normalized request's fields, and the original body's
 * `response_format`, `tools`, `tool_choice` and `parallel_tool_calls` as they came. A stream is
 * relayed chunk by chunk (the engine's server-sent events parsed with eventsource-parser), each
 * chunk checked and given our id prefix and model; usage is always asked of the engine
 * (`stream_options.include_usage`) and reported to the client where it asked. Aborting `signal`
 * (the client went away) aborts the engine's request. Returns the whole completion.
 */
export async function relayChat(backend: ServingBackend, request: ChatRequest, original: Record<string, unknown>, options: RelayOptions): Promise<ChatCompletion> {
  const body = backendBody(request, original, options.backendModel);
  const { response, timeout } = await backend.http.post(PATH, body, options.signal, { relayStatuses: true });
  try {
    if (!request.stream) {
      const text = await response.text();
      timeout.clear();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw backend.http.badReply(PATH, `the body is not JSON (${text.length} bytes)`);
      }
      return completionOf(backend, json, options.version);
    }
    return await relayStream(backend, request, response, timeout, options);
  } catch (e) {
    throw backend.http.failure(e, options.signal, timeout);
  } finally {
    timeout.clear();
  }
}

/** The body the engine gets. */
export function backendBody(request: ChatRequest, original: Record<string, unknown>, backendModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: backendModel,
    messages: request.messages,
    temperature: request.temperature,
    top_p: request.top_p,
    stream: request.stream,
  };
  if (request.max_tokens !== null) body['max_tokens'] = request.max_tokens;
  if (request.stop.length > 0) body['stop'] = request.stop;
  if (request.seed !== null) body['seed'] = request.seed;
  if (request.logprobs) {
    body['logprobs'] = true;
    body['top_logprobs'] = request.top_logprobs;
  }
  if (request.stream) body['stream_options'] = { include_usage: true };
  // reasoning_effort as the template switch both engines take (`chat_template_kwargs`, as the browser renders it).
  const thinking = enableThinkingFor(request.reasoning_effort);
  if (thinking !== undefined) body['chat_template_kwargs'] = { enable_thinking: thinking };
  for (const field of PASSTHROUGH_FIELDS) if (original[field] !== undefined && original[field] !== null) body[field] = original[field];
  return body;
}

async function relayStream(
  backend: ServingBackend,
  request: ChatRequest,
  response: Response,
  timeout: { restart(): void; clear(): void },
  options: RelayOptions,
): Promise<ChatCompletion> {
  if (!response.body) throw backend.http.badReply(PATH, 'the stream has no body');
  const events: string[] = [];
  const parser: EventSourceParser = createParser({ onEvent: (event) => events.push(event.data) });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let id = '';
  let created = 0;
  let usage: ChatCompletion['usage'] | null = null;
  let finish: string | null = null;
  let content = '';
  let reasoning = '';
  let done = false;
  try {
    while (!done) {
      const { done: ended, value } = await reader.read();
      if (ended) break;
      timeout.restart();
      parser.feed(value);
      while (events.length > 0 && !done) {
        const data = events.shift()!;
        if (data === '[DONE]') {
          done = true;
          break;
        }
        const raw = parseJson(backend, data);
        const upstreamError = (raw as { error?: unknown; object?: unknown } | null);
        if (upstreamError && (upstreamError.error !== undefined || upstreamError.object === 'error')) {
          const message = (upstreamError.error as { message?: string } | undefined)?.message ?? (upstreamError as { message?: string }).message ?? 'an error event';
          throw new JevError('backend_bad_reply', errorMessages.backendRefused(backend.kind, PATH, 200, `the stream ended with ${message}`), { param: null });
        }
        const chunk = chunkOf(backend, raw, options.version, request.include_usage);
        id ||= chunk.id;
        created ||= chunk.created;
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (choice) {
          content += choice.delta.content ?? '';
          reasoning += choice.delta.reasoning_content ?? '';
          finish = choice.finish_reason ?? finish;
        }
        // The usage-only chunk goes out only where the client asked for usage.
        if (choice || request.include_usage) await options.onChunk?.(chunk);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (!done) throw backend.http.badReply(PATH, 'the stream ended without data: [DONE]');
  if (!usage) throw backend.http.badReply(PATH, "the stream's last chunk carries no 'usage' (stream_options.include_usage was asked)");
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content };
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: id || newId(),
    object: 'chat.completion',
    created: created || Math.floor(Date.now() / 1000),
    model: options.version,
    choices: [{ index: 0, message, finish_reason: finish as never, logprobs: null }],
    usage,
  };
}

function parseJson(backend: ServingBackend, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw backend.http.badReply(PATH, `a stream event is not JSON (${JSON.stringify(data.slice(0, 80))})`);
  }
}

/** The engine's whole completion, checked, in our shape. */
export function completionOf(backend: ServingBackend, json: unknown, version: string): ChatCompletion {
  const bad = (what: string) => backend.http.badReply(PATH, what);
  const r = json as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') throw bad('the body is not an object');
  const choices = r['choices'];
  if (!Array.isArray(choices) || choices.length === 0) throw bad("'choices' is missing or empty");
  const choice = choices[0] as Record<string, unknown>;
  const m = choice?.['message'] as Record<string, unknown> | undefined;
  if (!m || typeof m !== 'object') throw bad("'choices[0].message' is missing");
  if (m['content'] !== null && m['content'] !== undefined && typeof m['content'] !== 'string') throw bad("'choices[0].message.content' is not a string");
  const message = { role: 'assistant', content: (m['content'] as string | null) ?? '' } as ChatCompletion['choices'][number]['message'] & Record<string, unknown>;
  if (typeof m['reasoning_content'] === 'string') message.reasoning_content = m['reasoning_content'];
  if (Array.isArray(m['tool_calls']) && m['tool_calls'].length > 0) message['tool_calls'] = m['tool_calls'];
  return {
    id: completionId(r['id']),
    object: 'chat.completion',
    created: createdOf(r['created']),
    model: version,
    choices: [{ index: 0, message, finish_reason: (choice['finish_reason'] ?? null) as never, logprobs: (choice['logprobs'] ?? null) as never }],
    usage: usageOf(r['usage'], bad, "'usage'"),
  };
}

/** One chunk of the engine's stream, checked, in our shape. */
export function chunkOf(backend: ServingBackend, json: unknown, version: string, includeUsage: boolean): ChatCompletionChunk {
  const bad = (what: string) => backend.http.badReply(PATH, what);
  const r = json as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') throw bad('a stream chunk is not an object');
  const choices = r['choices'];
  if (!Array.isArray(choices)) throw bad("a stream chunk has no 'choices'");
  const out: ChatCompletionChunk = { id: completionId(r['id']), object: 'chat.completion.chunk', created: createdOf(r['created']), model: version, choices: [] };
  const choice = choices[0] as Record<string, unknown> | undefined;
  if (choice) {
    const d = choice['delta'] as Record<string, unknown> | undefined;
    if (!d || typeof d !== 'object') throw bad("a stream chunk's 'choices[0].delta' is missing");
    const delta: Record<string, unknown> = {};
    if (d['role'] === 'assistant') delta['role'] = 'assistant';
    if (typeof d['content'] === 'string') delta['content'] = d['content'];
    if (typeof d['reasoning_content'] === 'string') delta['reasoning_content'] = d['reasoning_content'];
    if (Array.isArray(d['tool_calls'])) delta['tool_calls'] = d['tool_calls'];
    out.choices.push({ index: 0, delta: delta as never, finish_reason: (choice['finish_reason'] ?? null) as never, logprobs: (choice['logprobs'] ?? null) as never });
  }
  if (r['usage'] !== undefined && r['usage'] !== null) out.usage = usageOf(r['usage'], bad, "a stream chunk's 'usage'");
  else if (includeUsage) out.usage = null;
  return out;
}

function usageOf(raw: unknown, bad: (what: string) => JevError, name: string): ChatCompletion['usage'] {
  const u = raw as Record<string, unknown> | null | undefined;
  const prompt = u?.['prompt_tokens'];
  const completion = u?.['completion_tokens'];
  if (!Number.isInteger(prompt) || !Number.isInteger(completion)) throw bad(`${name} is missing or lacks prompt_tokens and completion_tokens`);
  const usage: ChatCompletion['usage'] = { prompt_tokens: prompt as number, completion_tokens: completion as number, total_tokens: (prompt as number) + (completion as number) };
  const cached = (u?.['prompt_tokens_details'] as Record<string, unknown> | null | undefined)?.['cached_tokens'];
  if (Number.isInteger(cached)) usage.prompt_tokens_details = { cached_tokens: cached as number };
  return usage;
}

function completionId(raw: unknown): string {
  const id = typeof raw === 'string' && raw !== '' ? raw : newId().slice('chatcmpl-'.length);
  return id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`;
}

function createdOf(raw: unknown): number {
  return Number.isInteger(raw) && (raw as number) >= 0 ? (raw as number) : Math.floor(Date.now() / 1000);
}

function newId(): string {
  return `chatcmpl-${crypto.randomUUID().replace(/-/g, '')}`;
}
