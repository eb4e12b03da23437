/**
 * Cross-origin isolation: the two headers that give a page SharedArrayBuffer, hence onnxruntime-web
 * its wasm threads. The dev and preview servers send them (vite.config.ts); the service worker adds
 * them to the app shell it serves from its precache, so a page opened offline is isolated too.
 * Other origins' resources must then answer with CORS or Cross-Origin-Resource-Policy.
 */
export const ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
};

/** `response` with the isolation headers set (a copy: responses from a cache are immutable). */
export function withIsolationHeaders(response: Response): Response {
  if (Object.entries(ISOLATION_HEADERS).every(([k, v]) => response.headers.get(k) === v)) return response;
  const headers = new Headers(response.headers);
  for (const [k, v] of Object.entries(ISOLATION_HEADERS)) headers.set(k, v);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}
