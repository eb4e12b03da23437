import type { ModelStorageStatus } from '../../../protocol/storage-status.ts';
import type { IntegrityCache } from './integrity-cache.ts';
import { storageRoom } from './storage-room.ts';

/** Where a cache's records stood when a load began, so that its report names only that load's files. */
export interface StorageMark {
  unstored: number;
  dropped: number;
  resumed: number;
}

export function storageMark(cache: IntegrityCache): StorageMark {
  return { unstored: cache.unstored.length, dropped: cache.dropped.length, resumed: cache.resumed.length };
}

/**
 * What a load stored of its model's files (`EngineStatus.storage`): the files served from memory
 * only, the bytes they need against the room `estimate()` leaves, and what to delete to make room;
 * the bytes resumed; the files found evicted and downloaded again. `base` is the model's folder URL.
 */
export async function storageReport(cache: IntegrityCache, mark: StorageMark, base: string): Promise<ModelStorageStatus> {
  const fileOf = (key: string) => (key.startsWith(base) ? key.slice(base.length) : key);
  const unstored = cache.unstored.slice(mark.unstored).map((u) => ({ file: fileOf(u.key), bytes: u.bytes, reason: u.reason, ...(u.error ? { error: u.error } : {}) }));
  const room = await storageRoom();
  const neededBytes = unstored.reduce((n, u) => n + u.bytes, 0);
  const report: ModelStorageStatus = {
    stored: unstored.length === 0,
    unstored,
    neededBytes,
    availableBytes: room?.available ?? null,
    usageBytes: room?.usage ?? null,
    quotaBytes: room?.quota ?? null,
    resumedBytes: cache.resumed.slice(mark.resumed).reduce((n, r) => n + r.bytes, 0),
    redownloaded: [...new Set(cache.dropped.slice(mark.dropped).map((d) => fileOf(d.key)))],
    message: null,
  };
  return { ...report, message: unstoredMessage(report) };
}

/** Why the model is not stored, the bytes needed against those available, and what to delete; null when it is. */
export function unstoredMessage(s: ModelStorageStatus): string | null {
  if (s.stored) return null;
  const files = s.unstored.map((u) => u.file).join(', ');
  const refused = s.unstored.find((u) => u.error !== undefined);
  const none = s.unstored.every((u) => u.reason === 'no_cache_storage');
  const room =
    s.availableBytes === null
      ? ''
      : `; this site has ${mb(s.availableBytes)} free of its ${mb(s.quotaBytes ?? 0)} quota, by estimate(), and stores ${mb(s.usageBytes ?? 0)} already`;
  const why = none
    ? 'this browser offers no Cache API here'
    : refused
      ? `the browser refused to store it ("${refused.error}")${refused.reason === 'store_failed' ? ', as a window that keeps no profile (Incognito) does with large files' : ''}`
      : 'there is not enough room';
  return (
    `Loaded from memory, not stored in this browser: ${why}. It needs ${mb(s.neededBytes)} (${files})${room}. ` +
    `To keep it, delete models you no longer need under "Stored in this browser", or free disk space; until then each visit downloads it again.`
  );
}

function mb(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} kB`;
}
