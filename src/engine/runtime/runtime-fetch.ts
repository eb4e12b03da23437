/**
 * onnxruntime-web's wasm fetched from the browser's HTTP cache without asking the host again, so
 * that the browser reuses the machine code it compiled from it.
 *
 * Chromium keeps a wasm module's compiled code beside the cached response it was compiled from,
 * and uses it where a later load gets that response as stored. A host that asks for
 * revalidation (`Cache-Control: no-cache` with an ETag, or `max-age=0`: most static hosts, for
 * files they serve without a hash in their names) answers a return visit's request with a 304, and
 * Chromium 156 then compiles the whole module again (17 MB at JSPI): a fresh visit of the 135M model
 * at q4, 2 threads, spent 4.5 s of background compilation beside the load and was ready 0.8–1.1 s
 * later than with the compiled code reused (docs/benchmarks.md, "Where a load goes"). A response
 * from the Cache API gets no compiled code at all (measured the same way).
 *
 * The shipped files carry their content's revision in their names (ort-build.ts ORT_REVISION), so
 * a stored copy under the same URL is the same bytes: onnxruntime's `fetch` of its wasm (it
 * compiles with `WebAssembly.instantiateStreaming(fetch(url))`) is made with `cache:
 * 'force-cache'`, which takes the stored response as it is and goes to the network only where
 * there is none. Only URLs whose file name is a shipped one (ORT_FILE_NAMES) are touched; every
 * other request, and a service worker's answer where one controls the worker, are as before.
 */
import { isOrtFile } from './ort-build.ts';

type Fetch = typeof fetch;

const WRAPPED = Symbol.for('jev.runtimeFetch');

/**
 * From now on `scope.fetch` asks the browser's cache first (`force-cache`) for the shipped runtime
 * files' GETs, and is unchanged for everything else. Idempotent.
 */
export function fetchRuntimeFromCache(scope: { fetch: Fetch } = globalThis): void {
  const current = scope.fetch as Fetch & { [WRAPPED]?: true };
  if (typeof current !== 'function' || current[WRAPPED]) return;
  const network = current.bind(scope);
  const wrapped = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
    if (method !== 'GET' || init?.cache || !isOrtFile(url)) return network(input, init);
    return network(input, { ...init, cache: 'force-cache' });
  }) as Fetch & { [WRAPPED]?: true };
  wrapped[WRAPPED] = true;
  scope.fetch = wrapped;
}
