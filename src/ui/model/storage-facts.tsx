import { useEffect, useState } from 'preact/hooks';
import type { EngineStatus } from '../../protocol/engine-api.ts';
import { formatBytes } from '../shared/format.ts';
import type { LoadProgress } from '../state/load-progress.ts';
import { deleteStoredModel, storedModels, type StoredModel } from './model-cache.ts';
import { askPersistence, type Persistence } from './storage-persistence.ts';

const PERSISTENCE: Record<Persistence, string> = {
  granted: 'granted: the browser keeps the stored models until you delete them.',
  denied: 'not granted: the browser may clear stored models when disk space runs short; they are then downloaded again.',
  unsupported: 'this browser does not offer it; it may clear stored models when disk space runs short.',
};

/**
 * Whether the browser keeps the models stored (`persist()`, asked when the first download starts),
 * and what the last load stored (`status().storage`): where it could not store the model, that it
 * serves from memory, the bytes needed against those available, and what to delete.
 */
export function StorageFacts({ progress, status, host }: { progress: LoadProgress; status: EngineStatus | null; host: string }) {
  const [persistence, setPersistence] = useState<Persistence | null>(null);
  const [others, setOthers] = useState<StoredModel[]>([]);
  const [tick, setTick] = useState(0);
  const downloading = progress.totals.value.files > 0;
  useEffect(() => {
    if (downloading || status) void askPersistence().then(setPersistence);
  }, [downloading, status]);
  const storage = status?.storage;
  const mine = status?.model ? `${host.replace(/\/+$/, '')}/${status.model}` : null;
  useEffect(() => {
    // What could be deleted to make room: the other models stored here.
    if (storage && !storage.stored) storedModels().then((list) => setOthers(list.filter((m) => m.prefix !== mine)), () => setOthers([]));
    else setOthers([]);
  }, [storage, mine, tick]);
  const remove = (prefix: string) => void deleteStoredModel(prefix).finally(() => setTick((t) => t + 1));
  return (
    <div class="storage">
      <p class="small-text" data-testid="storage-persistence" data-persistence={persistence ?? 'pending'}>
        Persistent storage: {persistence ? PERSISTENCE[persistence] : 'asked when a model download starts.'}
      </p>
      {storage && (
        <p
          class={storage.stored ? 'small-text' : 'small-text warning'}
          role={storage.stored ? undefined : 'alert'}
          data-testid="storage-status"
          data-stored={String(storage.stored)}
          data-needed={String(storage.neededBytes)}
          data-available={storage.availableBytes ?? undefined}
        >
          {storage.message ?? 'Every file of this model is stored in this browser: the next visit loads it without a download.'}
          {storage.resumedBytes > 0 && ` An interrupted download was resumed: ${formatBytes(storage.resumedBytes)} were kept from before.`}
          {storage.redownloaded.length > 0 && ` Found evicted by the browser and downloaded again: ${storage.redownloaded.join(', ')}.`}
          {storage.stored && storage.quotaBytes !== null && storage.usageBytes !== null && ` This site stores ${formatBytes(storage.usageBytes)} of its ${formatBytes(storage.quotaBytes)} quota.`}
        </p>
      )}
      {others.length > 0 && (
        <ul class="plain-list small-text" data-testid="storage-deletable" aria-label="Other models stored here, which could be deleted">
          {others.map((m) => (
            <li key={m.prefix} data-prefix={m.prefix} data-bytes={String(m.bytes)}>
              {m.prefix.replace(/^https?:\/\//, '')}: {formatBytes(m.bytes)} ({m.files} file{m.files === 1 ? '' : 's'}){' '}
              <button type="button" class="button small danger" onClick={() => remove(m.prefix)}>
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
