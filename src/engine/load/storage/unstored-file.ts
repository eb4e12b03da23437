import type { UnstoredReason } from '../../../protocol/storage-status.ts';
import type { StorageRoom } from './storage-room.ts';

export type { UnstoredReason };

/** A model file loaded but not stored (why: protocol/storage-status.ts); it is served from memory. */
export interface UnstoredFile {
  /** The file's URL (the cache key). */
  key: string;
  bytes: number;
  reason: UnstoredReason;
  /** The room there was (estimate()), where the browser says. */
  room: StorageRoom | null;
  /** The browser's own words, where it refused a write. */
  error?: string;
}

/** Whether `bytes` more fit in `room`, keeping a margin for the entry's headers and the browser's bookkeeping. */
export function fits(bytes: number, room: StorageRoom | null): boolean {
  return !room || bytes + (1 << 20) <= room.available;
}

/** The reason a refused write stands for. */
export function refusalReason(error: unknown): UnstoredReason {
  const name = (error as { name?: string } | null)?.name;
  return name === 'QuotaExceededError' ? 'quota_exceeded' : 'store_failed';
}
