/**
 * The room this origin has left for model files, from `navigator.storage.estimate()` (available
 * in workers too). Chromium's figure is the origin's quota (a share of the disk, far less in a
 * context that keeps no profile, or where DevTools overrides it) less what it already stores.
 */
export interface StorageRoom {
  quota: number;
  usage: number;
  /** quota − usage, never below 0. */
  available: number;
}

/** The room left, or null where the browser does not say (no StorageManager, or it fails). */
export async function storageRoom(): Promise<StorageRoom | null> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  if (!storage?.estimate) return null;
  try {
    const { quota, usage } = await storage.estimate();
    if (typeof quota !== 'number' || typeof usage !== 'number') return null;
    return { quota, usage, available: Math.max(0, quota - usage) };
  } catch {
    return null;
  }
}
