/**
 * The model-file cache (Cache API, the same `transformers-cache` transformers.js uses), with
 * integrity: every stored file carries its size and SHA-256, written when it was stored and
 * checked on every read. A partial or corrupt file is deleted and reported as a miss, so the
 * engine's fetch (model-fetch.ts) fetches it again; it is never served. Where the host states the file's SHA-256
 * (the hub's `X-Linked-ETag` for large files), a download that does not match is refused.
 */
import { bufferBody, VIEW_BYTES } from './one-buffer-body.ts';
import { releaseBuffer } from './release-buffer.ts';

export const MODEL_CACHE = 'transformers-cache';
const SIZE = 'x-jev-size';
const SHA = 'x-jev-sha256';

export interface IntegrityEvent {
  key: string;
  problem: 'size' | 'hash' | 'unverified';
}

export class IntegrityCache {
  /** Entries found damaged (and dropped) since this cache was made: observable by tests and the UI. */
  readonly dropped: IntegrityEvent[] = [];
  /**
   * Downloads refused because they do not match the SHA-256 the host states. The refusal fails
   * the read of that file (model-fetch.ts), and the engine looks here to name the cause of the
   * failed load (load-failure.ts `file_corrupt`).
   */
  readonly refused: { key: string; sha256: string; stated: string }[] = [];

  constructor(private readonly name: string = MODEL_CACHE) {}

  async match(key: string): Promise<Response | undefined> {
    const hit = await this.read(key);
    // Handed out as views over its buffer, released once read (one-buffer-body.ts): no second copy, no garbage.
    return hit && new Response(bufferBody(hit.bytes), { status: 200, headers: hit.headers });
  }

  /**
   * The stored file under `key`, checked, in one buffer (the caller's: it releases it), with its
   * headers; undefined when there is none or it was damaged (then it is dropped).
   */
  async read(key: string): Promise<{ bytes: ArrayBuffer; headers: Headers } | undefined> {
    const cache = await caches.open(this.name);
    const hit = await cache.match(key);
    if (!hit) return undefined;
    const size = Number(hit.headers.get(SIZE));
    const sha = hit.headers.get(SHA);
    let problem: IntegrityEvent['problem'] | null = null;
    let body: ArrayBuffer | null = null;
    if (!sha || !Number.isFinite(size)) problem = 'unverified';
    else {
      body = await hit.arrayBuffer();
      if (body.byteLength !== size) problem = 'size';
      else if ((await sha256(body)) !== sha) problem = 'hash';
    }
    if (problem || !body) {
      if (body) releaseBuffer(body);
      await cache.delete(key);
      this.dropped.push({ key, problem: problem ?? 'unverified' });
      return undefined;
    }
    return { bytes: body, headers: hit.headers };
  }

  /** The stored entry's headers (its size among them), without reading or checking its body; undefined when there is none. */
  async head(key: string): Promise<Headers | undefined> {
    const hit = await (await caches.open(this.name)).match(key);
    if (!hit) return undefined;
    await hit.body?.cancel();
    return hit.headers;
  }

  /**
   * Stores a downloaded file under `key` with its size and SHA-256. `body` stays the caller's
   * (model-fetch.ts releases it, or hands it on). A body whose hash does not match the one its host
   * states (`headers`) is refused: nothing is stored, and the refusal is recorded and thrown.
   */
  async store(key: string, body: ArrayBuffer, headers: Headers): Promise<void> {
    const sha = await sha256(body);
    const stated = statedSha256(headers);
    if (stated && stated !== sha) {
      this.refused.push({ key, sha256: sha, stated });
      throw new Error(`The download of ${key} is corrupt: its SHA-256 is ${sha}, the host states ${stated}.`);
    }
    const stored = new Headers(headers);
    stored.set(SIZE, String(body.byteLength));
    stored.set(SHA, sha);
    stored.set('content-length', String(body.byteLength));
    stored.delete('content-encoding');
    const cache = await caches.open(this.name);
    // Handed to the cache as views over `body` (no copy); `body` itself is left whole.
    await cache.put(key, new Response(bufferBody(body, VIEW_BYTES, false), { status: 200, headers: stored }));
  }

  async delete(key: string): Promise<boolean> {
    return (await caches.open(this.name)).delete(key);
  }
}

async function sha256(body: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

function statedSha256(headers: Headers): string | null {
  const etag = (headers.get('x-linked-etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
  return /^[0-9a-f]{64}$/.test(etag) ? etag : null;
}
