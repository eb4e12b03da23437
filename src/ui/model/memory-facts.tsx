import { Fragment } from 'preact';
import type { JevClient } from '../../facade/jev-client.ts';
import type { MemoryStatus } from '../../protocol/engine-api.ts';
import { formatBytes } from '../shared/format.ts';
import { usePolledStatus } from '../state/polled-status.ts';

const ROWS: readonly { key: keyof MemoryStatus; label: string; unknown: string }[] = [
  { key: 'modelBytes', label: 'Model weights', unknown: 'not known' },
  { key: 'kvCacheBytes', label: 'Key/value caches', unknown: 'not known' },
  { key: 'wasmHeapBytes', label: 'wasm heap', unknown: 'not known here' },
  { key: 'webgpuBufferBytes', label: 'WebGPU buffers', unknown: 'none (not on WebGPU)' },
];

/** What the loaded engine holds in memory (`status().memory`), read again every few seconds. */
export function MemoryFacts({ client, refreshKey }: { client: JevClient; refreshKey: string }) {
  const memory = usePolledStatus(client, refreshKey, (s) => s.memory);
  if (!memory) return <p class="muted small-text">Reading…</p>;
  return (
    <dl class="facts" data-testid="memory">
      {ROWS.map(({ key, label, unknown }) => {
        const value = memory[key];
        return (
          <Fragment key={key}>
            <dt>{label}</dt>
            <dd data-testid={`memory-${key}`} data-bytes={value ?? undefined}>
              {value === null ? unknown : formatBytes(value)}
            </dd>
          </Fragment>
        );
      })}
    </dl>
  );
}
