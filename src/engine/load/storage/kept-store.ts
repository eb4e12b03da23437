import type { LoadTimer } from '../load-timing.ts';

/** Where a kept part stands: the model file it was made from, the rewrite's signature, and the part's name. */
export interface KeptPlace {
  /** The model file's URL. */
  url: string;
  signature: string;
  part: string;
}

/** What a store says of a part it stored, for the manifest that names it (rewritten-graphs.ts). */
export interface KeptCheck {
  sha256: string;
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
   * The bytes stored at `place`, in one buffer (the caller's), or null. With `expect` (what the
   * store said when it stored them), checked against it: a part that does not match is null.
   */
  read(place: KeptPlace, expect: KeptCheck | null, timer: LoadTimer | null): Promise<ArrayBuffer | null>;
  /** Stores `bytes` at `place` (read while it runs); what the manifest records of them, or null where they were not stored. */
  write(place: KeptPlace, bytes: Uint8Array<ArrayBuffer>, timer: LoadTimer | null): Promise<KeptCheck | null>;
  /** Removes what is stored at `place`, where anything is (best effort). */
  remove(place: KeptPlace): Promise<void>;
}
