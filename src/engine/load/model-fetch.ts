import type { IntegrityCache } from './storage/integrity-cache.ts';
import type { LoadTimer } from './load-timing.ts';
import { currentHandoff, ModelHandoff } from './model-handoff.ts';
import { oneBufferBody } from './one-buffer-body.ts';
import { OneBufferResponse } from './one-buffer-response.ts';
import { releaseBuffer, releaseView } from './release-buffer.ts';
import { resumeFetch } from './storage/resume-fetch.ts';

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
 *   fails the read, and nothing is stored; a file the cache has no room for, or whose write the
 *   browser refuses, is served all the same (integrity-cache.ts `unstored`);
 * - a download that breaks off leaves what it received (partial-downloads.ts), and the next one
 *   asks for the rest with `Range` (resume-fetch.ts);
 * - a Range request (transformers.js' size check) answered from the stored entry's headers;
 * - during a load that hands model files to onnxruntime directly (model-handoff.ts), a graph or its
 *   external data is read whole (from the cache or the network, reporting progress to the handoff)
 *   and deposited, and the body transformers.js reads is only the ticket that names it; a stored one
 *   whose session can be made from a kept rewrite alone (`ModelHandoff.unneeded`) is not read at all.
 *
 * So a model file exists in JavaScript once, in one buffer, and never as chunks or as copies
 * left to the garbage collector (transformers.js' own caching made two: a copy in a `Response` it
 * stores and the stream's chunks — measured, 520 MiB of a 135M model stayed in the renderer for
 * as long as it was watched). Without a cache, responses only get one-buffer bodies.
 *
 * With the load's `timer` (load-timing.ts): reads from the cache are timed as `storageRead` (their
 * hashing as `integrity`), downloads as `download` until their last byte, and their bytes counted.
 */
export function modelFetch(
  network: Fetch,
  cache: IntegrityCache | null,
  handoffs: () => ModelHandoff | null = currentHandoff,
  timer: LoadTimer | null = null,
): Fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input.href;
    const method = (init?.method ?? 'GET').toUpperCase();
    if (method !== 'GET') return network(input, init);
    if (cache && new Headers(init?.headers).has('range')) {
      const headers = await cache.head(url);
      return headers ? new Response(null, { status: 200, headers }) : network(input, init);
    }
    const handoff = ModelHandoff.carries(url) ? handoffs() : null;
    const endRead = cache ? timer?.begin('storageRead') : undefined;
    if (handoff) {
      // A stored file the session does not need (its kept rewrite needs nothing of it): not read.
      const recorded = cache && handoff.unneeded ? await cache.recorded(url) : null;
      if (recorded && (await handoff.unneeded!(url, recorded.sha256))) {
        endRead?.();
        handoff.progress(url, recorded.size, recorded.size);
        const read = async () => {
          // Needed after all (the kept rewrite missed): read now, from the cache or else the network.
          const response = await modelFetch(network, cache, () => null, timer)(url, init);
          if (!response.ok) throw new Error(`The model file ${url} could not be read again: HTTP ${response.status}.`);
          return { bytes: await response.arrayBuffer(), sha256: cache?.digests.get(url) ?? null };
        };
        return new Response(handoff.depositUnread(url, recorded.sha256, read), { status: 200, headers: recorded.headers });
      }
      const hit = await cache?.read(url, timer);
      endRead?.();
      if (hit) {
        timer?.cached(hit.bytes.byteLength);
        handoff.progress(url, hit.bytes.byteLength, hit.bytes.byteLength);
        return new Response(handoff.deposit(url, hit.bytes, cache?.digests.get(url) ?? null), { status: 200, headers: hit.headers });
      }
    } else {
      const hit = await cache?.match(url, timer);
      endRead?.();
      if (hit) {
        timer?.cached(Number(hit.headers.get('content-length')) || 0);
        return hit;
      }
    }
    const endDownload = timer?.begin('download');
    const { response, prefix } = await resumeFetch(network, url, init, cache?.partials ?? null, (bytes) => cache?.resumed.push({ key: url, bytes }));
    if (response.status !== 200 || !response.body) {
      endDownload?.();
      return response;
    }
    const size = Number(response.headers.get('content-length'));
    const announced = Number.isSafeInteger(size) && size > 0 ? size : 0;
    // Before the download: is there room to store it? (Served either way.)
    const storable = !!cache && announced > 0 && (await cache.admit(url, announced - (prefix?.byteLength ?? 0)));
    let ticket: Uint8Array<ArrayBuffer> | null = null;
    const onEnd = async (bytes: ArrayBuffer) => {
      endDownload?.();
      timer?.fetched(bytes.byteLength - (prefix?.byteLength ?? 0));
      try {
        await cache?.store(url, bytes, response.headers, timer);
      } catch (e) {
        releaseBuffer(bytes);
        throw e;
      }
      if (prefix) await cache?.partials.delete(url);
      if (handoff) ticket = handoff.deposit(url, bytes, cache?.digests.get(url) ?? null);
      else releaseBuffer(bytes);
    };
    const onBreak = storable ? (received: Uint8Array<ArrayBuffer>) => cache.partials.keep(url, received, announced, response.headers).then(() => undefined) : undefined;
    const body = oneBufferBody(response.body, announced, onEnd, cache ? { prefix, ...(onBreak ? { onBreak } : {}) } : undefined);
    // Copied into the body's buffer: the kept part read back from the cache goes now, not at the next collection.
    if (prefix) releaseView(prefix);
    if (!handoff) return new OneBufferResponse(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    const reader = body.getReader();
    const handed = new ReadableStream<Uint8Array>(
      {
        // The whole download happens at the first read, reported as it arrives; then the ticket is the body.
        async pull(controller) {
          let loaded = 0;
          for (let r = await reader.read(); !r.done; r = await reader.read()) {
            loaded += r.value.byteLength;
            handoff.progress(url, loaded, Math.max(announced, loaded));
          }
          controller.enqueue(ticket!);
          controller.close();
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    // The file's own length is announced: transformers.js allocates that much and writes only the ticket into it.
    return new Response(handed, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
