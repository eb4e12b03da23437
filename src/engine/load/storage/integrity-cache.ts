/**
 * The model-file cache (Cache API, the same `transformers-cache` transformers.js uses), with
 * integrity: every stored file carries its size and SHA-256, written when it was stored and
 * checked, and a record of that check beside it (checked-records.ts). A later read of a file whose
 * record matches trusts it without hashing it again (its size and a 1 MiB sample of its bytes
 * checked: the whole hash was a fifth of an fp32 return visit, issue 62); a file without a record,
 * or whose record, size or sample does not match, is hashed whole, as every read did before. A
 * partial or corrupt file is deleted and reported as a miss, so the engine's fetch (model-fetch.ts)
 * fetches it again; it is never served. Where the host states the file's SHA-256
 * (the hub's `X-Linked-ETag` for large files), a download that does not match is refused.
 *
 * Storing is best effort: a file that does not fit the room `estimate()` leaves, or whose write the
 * browser refuses, is recorded in `unstored` (unstored-file.ts) and served from memory; an entry
 * whose body can no longer be read (evicted under it) counts as damaged, and is fetched again.
 */
import { bufferBody, VIEW_BYTES } from '../one-buffer-body.ts';
import { OneBufferResponse } from '../one-buffer-response.ts';
import { digest } from './digest.ts';
import { CheckedRecords, recordMatches, sampleBytes, type CheckedRecord } from './checked-records.ts';
import { PartialDownloads, validatorOf } from './partial-downloads.ts';
import { releaseBuffer } from '../release-buffer.ts';
import { storageRoom } from './storage-room.ts';
import { fits, refusalReason, type UnstoredFile } from './unstored-file.ts';
import type { LoadTimer } from '../load-timing.ts';

export const MODEL_CACHE = 'transformers-cache';
const SIZE = 'x-jev-size';
const SHA = 'x-jev-sha256';
const STORED_AT = 'x-jev-stored-at';

export interface IntegrityEvent {
  key: string;
  /** `evicted`: listed, but its body could not be read (the browser removed it). */
  problem: 'size' | 'hash' | 'unverified' | 'evicted';
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
  /** Files served but not stored, and why (unstored-file.ts): the engine's status reports those of its load. */
  readonly unstored: UnstoredFile[] = [];
  /** Interrupted downloads resumed with `Range` (resume-fetch.ts): the bytes kept from before. */
  readonly resumed: { key: string; bytes: number }[] = [];
  /** The SHA-256 of each file this cache object has read or stored, checked, by key (model-handoff.ts hands it on with the file). */
  readonly digests = new Map<string, string>();
  /** Keys `admit` turned away: their download is served, not stored. */
  readonly #turnedAway = new Set<string>();

  constructor(
    private readonly name: string = MODEL_CACHE,
    /** The parts of interrupted downloads, for the next load to resume (resume-fetch.ts). */
    readonly partials: PartialDownloads = new PartialDownloads(),
    /** The record of each stored file's check (checked-records.ts): a file whose record matches is not hashed again. */
    readonly records: CheckedRecords = new CheckedRecords(),
  ) {}

  /** The cache, or null where there is no Cache API here or it cannot be opened. */
  async #open(): Promise<Cache | null> {
    if (typeof caches === 'undefined') return null;
    return caches.open(this.name).catch(() => null);
  }

  /**
   * Before a download of `bytes` bytes: whether it may be stored. Where `estimate()` leaves less
   * room (or there is no Cache API), it will be served from memory only, and that is recorded.
   */
  async admit(key: string, bytes: number): Promise<boolean> {
    this.#turnedAway.delete(key);
    let file: UnstoredFile | null = null;
    if (!(await this.#open())) file = { key, bytes, reason: 'no_cache_storage', room: null };
    else {
      const room = await storageRoom();
      if (!fits(bytes, room)) file = { key, bytes, reason: 'quota_exceeded', room };
    }
    if (!file) return true;
    this.#turnedAway.add(key);
    return this.#refuse(file);
  }

  #refuse(file: UnstoredFile): false {
    this.unstored.push(file);
    return false;
  }

  async match(key: string, timer: LoadTimer | null = null): Promise<Response | undefined> {
    const hit = await this.read(key, timer);
    // Handed out as views over its buffer, released once read (one-buffer-body.ts): no second copy, no garbage.
    return hit && new OneBufferResponse(bufferBody(hit.bytes), { status: 200, headers: hit.headers });
  }

  /**
   * The stored file under `key`, checked, in one buffer (the caller's: it releases it), with its
   * headers; undefined when there is none or it was damaged (then it is dropped). A file whose
   * record matches (checked-records.ts) has its size and sample checked; any other is hashed whole,
   * and its record written when it passes. The hashing is timed as `integrity` where the load's
   * `timer` is given.
   */
  async read(key: string, timer: LoadTimer | null = null): Promise<{ bytes: ArrayBuffer; headers: Headers } | undefined> {
    const cache = await this.#open();
    const [hit, record] = await Promise.all([cache?.match(key).catch(() => undefined), this.records.get(key)]);
    if (!cache || !hit) return undefined;
    const size = Number(hit.headers.get(SIZE));
    const sha = hit.headers.get(SHA);
    let problem: IntegrityEvent['problem'] | null = null;
    let body: ArrayBuffer | null = null;
    if (!sha || !Number.isFinite(size)) problem = 'unverified';
    else {
      body = await hit.arrayBuffer().catch(() => null);
      const entry = { sha256: sha, size, validator: validatorOf(hit.headers), storedAt: hit.headers.get(STORED_AT) };
      if (!body) problem = 'evicted';
      else if (body.byteLength !== size) problem = 'size';
      else if (recordMatches(record, entry, body.byteLength) && (await digest(sampleBytes(body), timer)) === record.sample) {
        this.digests.set(key, sha);
        return { bytes: body, headers: hit.headers };
      }
      else if ((await digest(body, timer)) !== sha) problem = 'hash';
      else await this.records.put(key, { ...entry, sample: await digest(sampleBytes(body), timer) });
    }
    if (!problem && body && sha) this.digests.set(key, sha);
    if (problem || !body) {
      if (body) releaseBuffer(body);
      await Promise.all([cache.delete(key).catch(() => false), this.records.delete(key)]);
      this.dropped.push({ key, problem: problem ?? 'unverified' });
      return undefined;
    }
    return { bytes: body, headers: hit.headers };
  }

  /**
   * The SHA-256 and size of the stored file under `key` as its record of the check made when it was
   * stored says (checked-records.ts), with its headers, without reading its body: for a load that
   * will not read it (model-fetch.ts, `ModelHandoff.unneeded`). Null where there is no entry, or no
   * record that matches it (a read would hash it whole).
   */
  async recorded(key: string): Promise<{ sha256: string; size: number; headers: Headers } | null> {
    const cache = await this.#open();
    const [hit, record] = await Promise.all([cache?.match(key).catch(() => undefined), this.records.get(key)]);
    if (!hit) return null;
    await hit.body?.cancel().catch(() => undefined);
    const size = Number(hit.headers.get(SIZE));
    const sha = hit.headers.get(SHA);
    if (!sha || !Number.isSafeInteger(size)) return null;
    const entry = { sha256: sha, size, validator: validatorOf(hit.headers), storedAt: hit.headers.get(STORED_AT) };
    return recordMatches(record, entry, size) ? { sha256: sha, size, headers: hit.headers } : null;
  }

  /** The stored entry's headers (its size among them), without reading or checking its body; undefined when there is none. */
  async head(key: string): Promise<Headers | undefined> {
    const hit = await (await this.#open())?.match(key).catch(() => undefined);
    if (!hit) return undefined;
    await hit.body?.cancel().catch(() => undefined);
    return hit.headers;
  }

  /**
   * Stores a downloaded file under `key` with its size and SHA-256. `body` stays the caller's
   * (model-fetch.ts releases it, or hands it on). A body whose hash does not match the one its host
   * states (`headers`) is refused: nothing is stored, and the refusal is recorded and thrown.
   * A body `admit` turned away, or whose write the browser refuses, is only checked: resolves
   * whether it was stored.
   */
  async store(key: string, body: ArrayBuffer | Uint8Array<ArrayBuffer>, headers: Headers, timer: LoadTimer | null = null): Promise<boolean> {
    const sha = await digest(body, timer);
    const stated = statedSha256(headers);
    if (stated && stated !== sha) {
      this.refused.push({ key, sha256: sha, stated });
      throw new Error(`The download of ${key} is corrupt: its SHA-256 is ${sha}, the host states ${stated}.`);
    }
    const stored = new Headers(headers);
    stored.set(SIZE, String(body.byteLength));
    stored.set(SHA, sha);
    const storedAt = new Date().toISOString();
    stored.set(STORED_AT, storedAt);
    stored.set('content-length', String(body.byteLength));
    stored.delete('content-encoding');
    if (this.#turnedAway.delete(key)) return false;
    const cache = await this.#open();
    if (!cache) return this.#refuse({ key, bytes: body.byteLength, reason: 'no_cache_storage', room: null });
    try {
      // Handed to the cache as views over `body` (no copy); `body` itself is left whole.
      await cache.put(key, new Response(bufferBody(body, VIEW_BYTES, false), { status: 200, headers: stored }));
      const record: CheckedRecord = { sha256: sha, size: body.byteLength, validator: validatorOf(stored), storedAt, sample: await digest(sampleBytes(body), timer) };
      // Without its record (the write refused) the file is hashed whole on its next read, as before.
      await this.records.put(key, record);
      this.digests.set(key, sha);
      return true;
    } catch (e) {
      return this.#refuse({ key, bytes: body.byteLength, reason: refusalReason(e), room: await storageRoom(), error: String((e as Error)?.message ?? e) });
    }
  }

  async delete(key: string): Promise<boolean> {
    await this.records.delete(key);
    return (await (await this.#open())?.delete(key).catch(() => false)) ?? false;
  }
}

function statedSha256(headers: Headers): string | null {
  const etag = (headers.get('x-linked-etag') ?? '').replace(/^W\//, '').replace(/"/g, '');
  return /^[0-9a-f]{64}$/.test(etag) ? etag : null;
}
