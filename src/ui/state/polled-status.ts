import { useEffect, useState } from 'preact/hooks';
import type { JevClient } from '../../facade/jev-client.ts';
import type { EngineStatus } from '../../protocol/engine-api.ts';

/** How often a panel reads `status()` again: caches change with every request, tabs come and go. */
const EVERY_MS = 2000;

/**
 * One part of `client.status()`, read now and every {@link EVERY_MS} ms, until the panel goes away
 * or `refreshKey` changes. `undefined` until the first answer arrives; a failed read keeps the last.
 */
export function usePolledStatus<T>(client: JevClient, refreshKey: string, pick: (status: EngineStatus) => T): T | undefined {
  const [value, setValue] = useState<T | undefined>(undefined);
  useEffect(() => {
    let live = true;
    const read = () =>
      client.status().then(
        (s) => live && setValue(() => pick(s)),
        () => undefined,
      );
    void read();
    const timer = setInterval(read, EVERY_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
    // `pick` is a selector written inline by the caller; re-reading on its identity would restart the timer every render.
  }, [client, refreshKey]);
  return value;
}
