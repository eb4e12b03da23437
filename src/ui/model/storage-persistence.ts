/**
 * Persistent storage for the page's origin: `navigator.storage.persist()` asks the browser not to
 * evict the stored models when space runs short (Chromium grants it by the site's engagement,
 * without a prompt). Asked once per page, when the first model download starts; `persist()` exists
 * only in windows, not in the engine's worker.
 */
export type Persistence = 'granted' | 'denied' | 'unsupported';

let asked: Promise<Persistence> | null = null;

export function askPersistence(): Promise<Persistence> {
  asked ??= (async (): Promise<Persistence> => {
    const storage = (globalThis.navigator as Navigator | undefined)?.storage;
    if (!storage?.persist) return 'unsupported';
    try {
      if (await storage.persisted()) return 'granted';
      return (await storage.persist()) ? 'granted' : 'denied';
    } catch {
      return 'unsupported';
    }
  })();
  return asked;
}
