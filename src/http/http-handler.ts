import { errorMessages, JevError } from '../contract/index.ts';
import type { ClientSurface } from '../facade/jev-client.ts';
import { errorReply } from './error-response.ts';
import type { HttpRequest } from './http-request.ts';
import { toResponse, type JsonReply } from './json-reply.ts';

export type { HttpRequest } from './http-request.ts';
import { normalizeBasePath } from './endpoint-matcher.ts';
import { routes as defaultRoutes, type Route } from './routes.ts';

export interface HttpOptions {
  /** When set, every request must carry `Authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string | undefined;
  /** A prefix the endpoints are mounted under, e.g. `/jev` → `/jev/v1/chat/completions`. */
  basePath?: string | undefined;
}

export interface HttpHandler {
  /** Whether a URL names one of the endpoints (whatever the method). */
  matches(url: string | URL): boolean;
  /** Answers a request; a path that is not an endpoint gets 404 `not_found`. */
  handle(request: Request): Promise<Response>;
  /** `handle`, with a JSON answer left unrendered (json-reply.ts): what the Node server writes itself. */
  respond(request: HttpRequest): Promise<Response | JsonReply>;
}

/** The HTTP surface over a client: the same handler serves `client.fetch` and the service worker. */
export function createHttpHandler(
  client: ClientSurface,
  options: HttpOptions = {},
  routes: readonly Route[] = defaultRoutes,
): HttpHandler {
  const base = normalizeBasePath(options.basePath);
  const pathOf = (url: string | URL): string | null => {
    const { pathname } = new URL(url, 'http://localhost');
    if (!pathname.startsWith(base)) return null;
    const rest = pathname.slice(base.length) || '/';
    return rest.length > 1 ? rest.replace(/\/+$/, '') : rest;
  };
  const find = (url: string | URL) => {
    const path = pathOf(url);
    return path === null ? [] : routes.filter((r) => r.path === path);
  };

  const respond = async (request: HttpRequest): Promise<Response | JsonReply> => {
    try {
      const candidates = find(request.url);
      if (candidates.length === 0) {
        throw new JevError('not_found', errorMessages.notFound(new URL(request.url).pathname), { param: null });
      }
      const route = candidates.find((r) => r.method === request.method);
      if (!route) {
        const allowed = candidates.map((r) => r.method);
        return errorReply(new JevError('method_not_allowed', errorMessages.methodNotAllowed(request.method, allowed), { param: null }), { Allow: allowed.join(', ') });
      }
      if (options.apiKey !== undefined && request.headers.get('authorization') !== `Bearer ${options.apiKey}`) {
        throw new JevError('unauthorized', errorMessages.unauthorized(), { param: null });
      }
      return await route.handle({ request, client });
    } catch (e) {
      return errorReply(e);
    }
  };

  return {
    matches: (url) => find(url).length > 0,
    respond,
    handle: async (request) => toResponse(await respond(request)),
  };
}
