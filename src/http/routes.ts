import type { ClientSurface } from '../facade/jev-client.ts';
import { readJsonBody } from './read-json-body.ts';
import { sseStream, SSE_HEADERS } from './sse.ts';

/** What a route handler is given: the request and the client that serves it. */
export interface RouteContext {
  request: Request;
  client: ClientSurface;
}

/** A route is data: a method, a path (below the base path), and its handler. */
export interface Route {
  method: 'GET' | 'POST';
  path: string;
  handle(ctx: RouteContext): Promise<Response>;
}

async function decision({ request, client }: RouteContext): Promise<Response> {
  const body = await readJsonBody(request);
  return Response.json(await client.decisions.create(body, { signal: request.signal }));
}

async function chatCompletion({ request, client }: RouteContext): Promise<Response> {
  const body = await readJsonBody(request);
  const controller = new AbortController();
  request.signal.addEventListener('abort', () => controller.abort(request.signal.reason), { once: true });
  const result = await client.chat.completions.create(body, { signal: controller.signal });
  if (Symbol.asyncIterator in (result as object)) {
    const stream = sseStream(result as AsyncIterable<never>, () => controller.abort(new DOMException('The stream was cancelled.', 'AbortError')));
    return new Response(stream, { headers: SSE_HEADERS });
  }
  return Response.json(result);
}

async function models({ client }: RouteContext): Promise<Response> {
  return Response.json(await client.models.list());
}

/** The paths of CONTRACT §3. `/v1/systemone` is TypeSafe's own Jev path, answered as the decision path. */
export const routes: readonly Route[] = [
  { method: 'POST', path: '/inference/jev/api/alpha/decisions', handle: decision },
  { method: 'POST', path: '/v1/systemone', handle: decision },
  { method: 'POST', path: '/v1/chat/completions', handle: chatCompletion },
  { method: 'GET', path: '/v1/models', handle: models },
];
