import type { ClientSurface } from '../facade/jev-client.ts';
import type { HttpRequest } from './http-request.ts';
import { JsonReply } from './json-reply.ts';
import { readJsonBody } from './read-json-body.ts';
import { sseStream, SSE_HEADERS } from './sse.ts';

/** What a route handler is given: the request and the client that serves it. */
export interface RouteContext {
  request: HttpRequest;
  client: ClientSurface;
}

/** A route is data: a method, a path (below the base path), and its handler. */
export interface Route {
  method: 'GET' | 'POST';
  path: string;
  /** A JSON answer is left a JsonReply (rendered by whoever serves it), a stream is a Response. */
  handle(ctx: RouteContext): Promise<Response | JsonReply>;
}

async function decision({ request, client }: RouteContext): Promise<JsonReply> {
  const body = await readJsonBody(request);
  return new JsonReply(await client.decisions.create(body, { signal: request.signal }));
}

/** OpenAI's Decisions shape (`openai.decisions.create`): the client's `decisions.createOpenAI`, the same engine path as `decision`. */
async function openAIDecision({ request, client }: RouteContext): Promise<JsonReply> {
  const body = await readJsonBody(request);
  return new JsonReply(await client.decisions.createOpenAI(body, { signal: request.signal }));
}

/** An extraction (docs/extraction.md): typed fields read from one state, in the AI SDK's extraction shape. */
async function extraction({ request, client }: RouteContext): Promise<JsonReply> {
  const body = await readJsonBody(request);
  return new JsonReply(await client.extractions.create(body, { signal: request.signal }));
}

async function chatCompletion({ request, client }: RouteContext): Promise<Response | JsonReply> {
  const body = await readJsonBody(request);
  const controller = new AbortController();
  request.signal.addEventListener('abort', () => controller.abort(request.signal.reason), { once: true });
  const result = await client.chat.completions.create(body, { signal: controller.signal });
  if (Symbol.asyncIterator in (result as object)) {
    const stream = sseStream(result as AsyncIterable<never>, () => controller.abort(new DOMException('The stream was cancelled.', 'AbortError')));
    return new Response(stream, { headers: SSE_HEADERS });
  }
  return new JsonReply(result);
}

async function models({ client }: RouteContext): Promise<JsonReply> {
  return new JsonReply(await client.models.list());
}

/**
 * The paths of CONTRACT §3. `/v1/systemone` is TypeSafe's own Jev path, answered as the decision path;
 * `/v1/decisions` is OpenAI's Decisions shape over the same engine path (docs/decisions.md).
 */
export const routes: readonly Route[] = [
  { method: 'POST', path: '/inference/jev/api/alpha/decisions', handle: decision },
  { method: 'POST', path: '/v1/systemone', handle: decision },
  { method: 'POST', path: '/v1/decisions', handle: openAIDecision },
  { method: 'POST', path: '/v1/extractions', handle: extraction },
  { method: 'POST', path: '/v1/chat/completions', handle: chatCompletion },
  { method: 'GET', path: '/v1/models', handle: models },
];
