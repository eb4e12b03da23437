/**
 * The part of a model file received before its download broke off, kept so that the next load
 * fetches only the rest (resume-fetch.ts). Kept in a Cache API cache of its own (so that it never
 * passes for a whole file, and the model cache lists only whole ones), keyed by the file's URL,
 * with the file's whole size and the host's validator (its SHA-256, ETag or Last-Modified): the
 * rest is joined on only where the host still serves the same file.
 *
 * Everything here is best effort: where the Cache API is missing or refuses (a context without a
 * profile, the quota spent), nothing is kept and the next load starts the file afresh.
 */
export const PARTIAL_CACHE = 'jev-partial-downloads';
const TOTAL = 'x-jev-total';
const VALIDATOR = 'x-jev-validator';

export interface PartialDownload {
  bytes: ArrayBuffer;
  /** The whole file's size. */
  total: number;
  validator: string;
}

/** What says that two answers of a host are the same file: its stated SHA-256, else its ETag, else Last-Modified. */
export function validatorOf(headers: Headers): string | null {
  return headers.get('x-linked-etag') ?? headers.get('etag') ?? headers.get('last-modified');
}

export class PartialDownloads {
  constructor(private readonly name: string = PARTIAL_CACHE) {}

  private async open(): Promise<Cache | null> {
    if (typeof caches === 'undefined') return null;
    return caches.open(this.name).catch(() => null);
  }

  /** The part kept of `key`, or null. */
  async get(key: string): Promise<PartialDownload | null> {
    try {
      const hit = await (await this.open())?.match(key);
      if (!hit) return null;
      const total = Number(hit.headers.get(TOTAL));
      const validator = hit.headers.get(VALIDATOR);
      const bytes = await hit.arrayBuffer();
      if (!validator || !Number.isSafeInteger(total) || bytes.byteLength === 0 || bytes.byteLength >= total) {
        await this.delete(key);
        return null;
      }
      return { bytes, total, validator };
    } catch {
      return null;
    }
  }

  /**
   * Keeps `received` (the first bytes of a file of `total` bytes whose answer carried `headers`);
   * nothing where the host gave no validator to resume against. Resolves whether it was kept.
   */
  async keep(key: string, received: Uint8Array<ArrayBuffer>, total: number, headers: Headers): Promise<boolean> {
    const validator = validatorOf(headers);
    if (!validator || received.byteLength === 0 || !(total > received.byteLength)) return false;
    try {
      const cache = await this.open();
      if (!cache) return false;
      const stored = new Headers({ [TOTAL]: String(total), [VALIDATOR]: validator, 'content-length': String(received.byteLength) });
      // A Response copies the bytes of a BufferSource when it is made: `received` may be released after.
      await cache.put(key, new Response(received, { status: 200, headers: stored }));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await (await this.open())?.delete(key).catch(() => false);
  }
}
