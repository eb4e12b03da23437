/**
 * Why a model file was loaded but not stored in this browser, a stable code:
 * - `quota_exceeded`: before the download, the file's bytes were more than `navigator.storage.estimate()`
 *   left, or the browser refused the write for want of quota;
 * - `store_failed`: the browser refused the write for another reason (Chromium in a context that keeps
 *   no profile, as an Incognito window, answers a large `put` with "Unexpected internal error");
 * - `no_cache_storage`: there is no Cache API here.
 * Such a file is still served, from memory: a failure to store never fails a load.
 */
export type UnstoredReason = 'quota_exceeded' | 'store_failed' | 'no_cache_storage';

/** Where the loaded model's files are kept (`EngineStatus.storage`; docs/offline.md, "Storage that survives"). */
export interface ModelStorageStatus {
  /** Whether every file this load read is stored in this browser, so that the next load needs no download. */
  stored: boolean;
  /** The files served from memory but not stored (paths in the model's folder), with why. */
  unstored: { file: string; bytes: number; reason: UnstoredReason; error?: string }[];
  /** The bytes those files need, against the room `estimate()` left this origin (null where the browser does not say). */
  neededBytes: number;
  availableBytes: number | null;
  usageBytes: number | null;
  quotaBytes: number | null;
  /** Bytes of interrupted downloads that this load kept and resumed with `Range` rather than fetched again. */
  resumedBytes: number;
  /** Files that were stored but found unreadable or damaged at this load (evicted by the browser), and downloaded again. */
  redownloaded: string[];
  /** In words, with what to delete; null when everything is stored. */
  message: string | null;
}
