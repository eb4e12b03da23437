import type { LoadTimer } from '../load-timing.ts';
import type { KeptBytes } from './gathered-bytes.ts';

/** Where a kept part stands: the model file it was made from, the rewrite's signature, and the part's name. */
export interface KeptPlace {
  /** The model file's URL. */
  url: string;
  signature: string;
  part: string;
}

/** What a store says of a part it stored, for the manifest that names it (rewritten-graphs.ts). */
export interface KeptCheck {
  /** Its SHA-256; null where it was written from pieces (gathered-bytes.ts) and never whole in memory: then its size and sample are what a read is checked against. */
  sha256: string | null;
  bytes: number;
  /** The SHA-256 of its sample (checked-records.ts `sampleBytes`), where the store checks a read against it. */
  sample?: string;
}

/**
 * Where the session rewrites kept between loads are stored (rewritten-graphs.ts): the Origin
 * Private File System where the browser has one (opfs-kept-store.ts: a return visit reads 130 MiB
 * of a q4 model's parts in about a third of the Cache API's time), else the model cache
 * (cache-kept-store.ts: Node, and a browser without the OPFS).
 */
export interface KeptStore {
  readonly kind: 'opfs' | 'cache';
  /**
   * The largest share of a model's own file that a kept rewrite copies as a part of its own, so
   * that a return visit reads that part instead of the file (rewritten-graphs.ts, `KEPT_WEIGHTS`):
   * where the part is read no faster than the file, a copy of most of it costs room and saves
   * little; where it is read in a third of the file's time, it saves time at any share.
   */
  readonly keepsFileShare: number;
  /**
   * The bytes stored at `place`, in one buffer (the caller's), or null. With `expect` (what the
   * store said when it stored them), checked against it: a part that does not match is null.
   */
  read(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<ArrayBuffer | null>;
  /**
   * The bytes stored at `place` for a session to mount, checked as `read` checks them: where the
   * store can, not read at all until the session asks for each range (part-on-disk.ts, the OPFS in
   * the engine's worker); else read whole. A store without it is read with `read`.
   */
  open?(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<Uint8Array | null>;
  /** Stores `bytes` at `place` (read while it runs); what the manifest records of them, or null where they were not stored. */
  write(place: KeptPlace, bytes: KeptBytes, timer: LoadTimer | null): Promise<KeptCheck | null>;
  /** Removes what is stored at `place`, where anything is (best effort). */
  remove(place: KeptPlace): Promise<void>;
}
