/// <reference lib="webworker" />
import { matchPrecache } from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';

/**
 * The bundled models' files (build/bundled-models.ts, under `bundled/`) answered from the precache,
 * for GET and for HEAD too (the engine asks a host with HEAD which formats a model offers): so the
 * bundled model loads offline from the first visit. The build's precache lists every bundled file,
 * so a path under `bundled/` it lacks does not exist: 404, as the server answers, online or not.
 */
export function routeBundledFiles(scope: string): void {
  const prefix = new URL('bundled/', scope).href;
  const answer = async ({ request }: { request: Request }): Promise<Response> => {
    const url = request.url.split(/[?#]/)[0]!;
    const hit = await matchPrecache(url);
    if (!hit) return new Response('not a bundled model file', { status: 404, headers: { 'Content-Type': 'text/plain' } });
    if (request.method !== 'HEAD') return hit;
    const headers = new Headers(hit.headers);
    const size = (await hit.blob()).size;
    headers.set('Content-Length', String(size));
    return new Response(null, { status: hit.status, headers });
  };
  const match = ({ url }: { url: URL }) => url.href.startsWith(prefix);
  registerRoute(match, answer, 'GET');
  registerRoute(match, answer, 'HEAD');
}
