import type { HttpHandler } from './http-handler.ts';

/**
 * A `fetch`-compatible function that serves the endpoints in this page, without a service
 * worker or a network: for clients that take a custom fetch (the `openai` client, the AI SDK).
 * Relative URLs resolve against the page's origin (or localhost outside a page).
 */
export function fetchFunction(handler: HttpHandler): typeof fetch {
  const origin = (globalThis as { location?: Location }).location?.origin ?? 'http://localhost';
  return (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request && init === undefined ? input : new Request(resolve(input, origin), init);
    request.signal.throwIfAborted();
    const response = await handler.handle(request);
    // Like fetch: an aborted call rejects with the signal's reason (an AbortError), not a response.
    request.signal.throwIfAborted();
    return response;
  }) as typeof fetch;
}

function resolve(input: RequestInfo | URL, origin: string): RequestInfo | URL {
  if (typeof input === 'string') return new URL(input, origin);
  return input;
}
