/**
 * onnxruntime-web's runtime files fetched from the browser's cache as stored (src/engine/runtime/runtime-fetch.ts):
 * `cache: 'force-cache'` for a GET of a shipped file (a name that carries its revision), and every
 * other request passed on exactly as it was made.
 */
import { describe, expect, it } from 'vitest';
import { isOrtFile, ORT_BUILDS, ORT_SOURCE_FILES } from '../../src/engine/runtime/ort-build.ts';
import { fetchRuntimeFromCache } from '../../src/engine/runtime/runtime-fetch.ts';

function scope() {
  const calls: { url: string; init: RequestInit | undefined }[] = [];
  const s = {
    fetch: (async (input: RequestInfo | URL, init?: RequestInit) => {
      calls.push({ url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, init });
      return new Response('ok');
    }) as typeof fetch,
  };
  return { s, calls };
}

describe('fetchRuntimeFromCache', () => {
  it('asks the cache first for a shipped runtime file, and only for those', async () => {
    const { s, calls } = scope();
    fetchRuntimeFromCache(s);
    const wasm = `http://a.test/app/ort/${ORT_BUILDS.jspi.wasm}`;
    await s.fetch(wasm, { credentials: 'same-origin' });
    await s.fetch(new URL(`http://a.test/ort/${ORT_BUILDS.asyncify.wasm}`));
    // Not shipped names: onnxruntime-web's own (no revision), model files, anything else.
    await s.fetch(`http://a.test/ort/${ORT_SOURCE_FILES.jspi.wasm}`);
    await s.fetch('http://a.test/models/m/resolve/main/onnx/model.onnx', { headers: { range: 'bytes=0-0' } });
    // Not a plain GET, or a cache mode of the caller's own: as made.
    await s.fetch(wasm, { method: 'HEAD' });
    await s.fetch(wasm, { cache: 'reload' });
    expect(calls.map((c) => c.init?.cache)).toEqual(['force-cache', 'force-cache', undefined, undefined, undefined, 'reload']);
    expect(calls[0]!.init).toEqual({ credentials: 'same-origin', cache: 'force-cache' });
    expect(calls[3]!.init).toEqual({ headers: { range: 'bytes=0-0' } });
  });

  it('wraps once, however often a load applies it', async () => {
    const { s, calls } = scope();
    fetchRuntimeFromCache(s);
    const once = s.fetch;
    fetchRuntimeFromCache(s);
    expect(s.fetch).toBe(once);
    await s.fetch(`/ort/${ORT_BUILDS.jspi.mjs}`);
    expect(calls).toHaveLength(1);
  });

  it('knows the shipped names with or without a query', () => {
    expect(isOrtFile(`/ort/${ORT_BUILDS.jspi.wasm}?x=1`)).toBe(true);
    expect(isOrtFile(`/ort/${ORT_SOURCE_FILES.jspi.wasm}`)).toBe(false);
    expect(isOrtFile('/assets/engine.worker-abc.js')).toBe(false);
  });
});
