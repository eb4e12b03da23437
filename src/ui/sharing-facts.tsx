import { useEffect, useState } from 'preact/hooks';
import type { JevClient } from '../facade/jev-client.ts';
import type { SharingStatus } from '../protocol/engine-api.ts';
import { sharingText } from './sharing-text.ts';

/** How often the panel reads `status().sharing`: tabs come and go, and a host may hand over. */
const EVERY_MS = 2000;

/** Which tab hosts the engine and how many it serves, read again every few seconds. */
export function SharingFacts({ client, refreshKey }: { client: JevClient; refreshKey: string }) {
  const [sharing, setSharing] = useState<SharingStatus | null | undefined>(undefined);
  useEffect(() => {
    let live = true;
    const read = () =>
      client.status().then(
        (s) => live && setSharing(s.sharing ?? null),
        () => undefined,
      );
    void read();
    const timer = setInterval(read, EVERY_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [client, refreshKey]);
  if (sharing === undefined) return <p class="muted small-text">Reading…</p>;
  return (
    <p class="small-text" data-testid="sharing" data-hosting={sharing ? String(sharing.hosting) : undefined} data-tabs={sharing?.tabs}>
      {sharingText(sharing)}
    </p>
  );
}
