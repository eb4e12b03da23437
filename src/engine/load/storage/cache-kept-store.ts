import { GatheredBytes, type KeptBytes } from './gathered-bytes.ts';
import { IntegrityCache } from './integrity-cache.ts';
import type { LoadTimer } from '../load-timing.ts';
import type { KeptCheck, KeptPlace, KeptStore } from './kept-store.ts';

const CONTENT_TYPE = new Headers({ 'content-type': 'application/octet-stream' });

/**
 * Kept parts in the model cache (Cache API), each an entry of its own under the model file's URL,
 * `{file}.jev-rewritten/{signature}/{part}`, stored and read through the integrity cache
 * (checked-records.ts: hashed when stored, trusted by its record after): where there is no Origin
 * Private File System (Node; opfs-kept-store.ts elsewhere).
 */
export class CacheKeptStore implements KeptStore {
  readonly kind = 'cache';
  /** A part is read from the Cache API no faster than the file it copies: copied where it is at most half the file. */
  readonly keepsFileShare = 0.5;

  /** Its own cache object on the model cache, so that a part not stored is not counted among the load's files (`status().storage`). */
  constructor(readonly cache: IntegrityCache = new IntegrityCache()) {}

  static key(place: KeptPlace): string {
    return `${place.url}.jev-rewritten/${place.signature}/${place.part}`;
  }

  async read(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<ArrayBuffer | null> {
    const hit = await this.cache.read(CacheKeptStore.key(place), timer);
    if (!hit) return null;
    if (expect && (hit.headers.get('x-jev-sha256') !== expect.sha256 || hit.bytes.byteLength !== expect.bytes)) return null;
    return hit.bytes;
  }

  async write(place: KeptPlace, given: KeptBytes, timer: LoadTimer | null): Promise<KeptCheck | null> {
    // The Cache API stores one body: pieces are gathered.
    const bytes = given instanceof GatheredBytes ? given.whole() : given;
    const key = CacheKeptStore.key(place);
    // Where estimate() leaves no room for it, nothing is written.
    if (!(await this.cache.admit(key, bytes.byteLength)) || !(await this.cache.store(key, bytes, CONTENT_TYPE, timer))) return null;
    return { sha256: this.cache.digests.get(key)!, bytes: bytes.byteLength };
  }

  async remove(place: KeptPlace): Promise<void> {
    await this.cache.delete(CacheKeptStore.key(place)).catch(() => false);
  }
}
