/**
 * What the model cache (integrity-cache.ts) knew of a stored file when its SHA-256 was checked, so
 * that a later load trusts the file without hashing it again (issue 62: the hash was a fifth of an
 * fp32 return visit). One record per file, kept in a Cache API cache of its own (so that the model
 * cache lists only model files), keyed by the file's URL: its SHA-256 and size, the host's
 * validator (its stated SHA-256, ETag or Last-Modified), the time it was stored, and the SHA-256 of
 * a sample of its bytes (its first and last 64 KiB and 14 blocks between, 1 MiB in all).
 *
 * A stored file is trusted where its record matches its entry (the same SHA-256, size, validator and
 * time stored), its body has that size, and the sample of its body hashes as recorded: a write cut
 * short, a file of another size, an entry rewritten with other bytes at its start, end or sampled
 * blocks are hashed whole as before (and dropped when they fail). What a record cannot see: a
 * change of the same size confined to bytes between the sampled blocks, which the whole hash of
 * every load caught; it is not served from anything but the browser's own storage.
 *
 * Best effort, as the rest of storage/: where the cache is missing or refuses, there is no record,
 * and the file is hashed whole on every load, as before.
 */
export const RECORD_CACHE = 'jev-checked-files';
const SAMPLE_BLOCK = 64 << 10;
const SAMPLE_BLOCKS = 16;

export interface CheckedRecord {
  sha256: string;
  size: number;
  /** The host's validator of the file (partial-downloads.ts `validatorOf`), or null. */
  validator: string | null;
  /** When the file was stored (ISO time, the entry's `x-jev-stored-at`); null for a file stored before records were written. */
  storedAt: string | null;
  /** SHA-256 of the sampled blocks (`sampleDigest`). */
  sample: string;
}

/** The `SAMPLE_BLOCKS` blocks of `SAMPLE_BLOCK` bytes a record hashes, evenly spaced from the first to the last; the whole file where it is not larger. */
export function sampleBlocks(size: number): [start: number, end: number][] {
  if (size <= SAMPLE_BLOCK * SAMPLE_BLOCKS) return [[0, size]];
  const step = (size - SAMPLE_BLOCK) / (SAMPLE_BLOCKS - 1);
  return Array.from({ length: SAMPLE_BLOCKS }, (_, i) => {
    const start = Math.round(i * step);
    return [start, start + SAMPLE_BLOCK];
  });
}

/** The bytes of the sampled blocks of `body`, one after the other (at most 1 MiB). */
export function sampleBytes(body: ArrayBuffer | Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(body);
  return sampleOf(bytes.byteLength, (s, e) => bytes.subarray(s, e));
}

/** The sampled blocks of `size` bytes that `read` gives a range of, one after the other (at most 1 MiB). */
export function sampleOf(size: number, read: (start: number, end: number) => Uint8Array): Uint8Array<ArrayBuffer> {
  const blocks = sampleBlocks(size);
  const out = new Uint8Array(blocks.reduce((n, [s, e]) => n + e - s, 0));
  let at = 0;
  for (const [s, e] of blocks) {
    out.set(read(s, e), at);
    at += e - s;
  }
  return out;
}

/** Whether `record` is the one written for the entry whose own record (from its headers) is `entry`, and `bytes` of the body read. */
export function recordMatches(record: CheckedRecord | null, entry: Omit<CheckedRecord, 'sample'>, bytes: number): record is CheckedRecord {
  return !!record && record.sha256 === entry.sha256 && record.size === entry.size && bytes === entry.size && record.validator === entry.validator && record.storedAt === entry.storedAt;
}

export class CheckedRecords {
  constructor(private readonly name: string = RECORD_CACHE) {}

  async #open(): Promise<Cache | null> {
    if (typeof caches === 'undefined') return null;
    return caches.open(this.name).catch(() => null);
  }

  /** The record of `key`, or null (none, or unreadable). */
  async get(key: string): Promise<CheckedRecord | null> {
    try {
      const hit = await (await this.#open())?.match(key);
      if (!hit) return null;
      const r = (await hit.json()) as Partial<CheckedRecord>;
      const ok = typeof r.sha256 === 'string' && Number.isSafeInteger(r.size) && typeof r.sample === 'string';
      return ok ? { sha256: r.sha256!, size: r.size!, validator: r.validator ?? null, storedAt: r.storedAt ?? null, sample: r.sample! } : null;
    } catch {
      return null;
    }
  }

  /** Writes the record of `key`; resolves whether it was kept. */
  async put(key: string, record: CheckedRecord): Promise<boolean> {
    try {
      const cache = await this.#open();
      if (!cache) return false;
      await cache.put(key, new Response(JSON.stringify(record), { status: 200, headers: { 'content-type': 'application/json' } }));
      return true;
    } catch {
      return false;
    }
  }

  async delete(key: string): Promise<void> {
    await (await this.#open())?.delete(key).catch(() => false);
  }
}
