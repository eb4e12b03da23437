import type { JevClient } from '../../facade/jev-client.ts';
import { usePolledStatus } from '../state/polled-status.ts';
import { sharingText } from './sharing-text.ts';

/** Which tab hosts the engine and how many it serves, read again every few seconds. */
export function SharingFacts({ client, refreshKey }: { client: JevClient; refreshKey: string }) {
  const sharing = usePolledStatus(client, refreshKey, (s) => s.sharing ?? null);
  if (sharing === undefined) return <p class="muted small-text">Reading…</p>;
  return (
    <p class="small-text" data-testid="sharing" data-hosting={sharing ? String(sharing.hosting) : undefined} data-tabs={sharing?.tabs}>
      {sharingText(sharing)}
    </p>
  );
}
