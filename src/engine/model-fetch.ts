import type { IntegrityCache } from './integrity-cache.ts';
import { oneBufferBody } from './one-buffer-body.ts';

/** The shape of transformers.js' `env.fetch`. */
type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The `fetch` transformers.js reads model files with (`env.fetch`), with the model cache at this
 * boundary rather than behind transformers.js' own cache hooks:
 *
 * - a GET answered from the integrity cache when it holds the file, checked (integrity-cache.ts),
 *   its body handed out as views over one buffer, released once read;
 * - otherwise from the network, the body read into one buffer (one-buffer-body.ts), which is then
 *   hashed, stored and released; a download whose hash does not match the one its host states
 *   fails the read, and nothing is stored;
 * - a Range request (transformers.js' size check) answered from the stored entry's headers.
 *
 * So a model file exists in JavaScript once, in one buffer, and never as chunks or as copies
 * left to the garbage collector (transformers.js' own caching made two: a copy in a `Response` it
 * stores and the stream's chunks — measured, 520 MiB of a 135M model stayed in the renderer for
 * as long as it was watched). Without a cache, responses only get one-buffer bodies.
 */
export function modelFetch(network: Fetch, cache: IntegrityCache | null): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input.href;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET') return network(input, init);
    if (cache && new Headers(init?.headers).has('range')) {
      const headers = await cache.head(url);
      return headers ? new Response(null, { status: 200, headers }) : network(input, init);
    }
    const hit = await cache?.match(url);
    if (hit) return hit;
    const response = await network(input, init);
    if (response.status !== 200 || !response.body) return response;
    const size = Number(response.headers.get('content-length'));
    const store = cache ? (bytes: ArrayBuffer) => cache.store(url, bytes, response.headers) : undefined;
    const body = oneBufferBody(response.body, Number.isSafeInteger(size) && size > 0 ? size : 0, store);
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
