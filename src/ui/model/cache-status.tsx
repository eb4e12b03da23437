import { useEffect, useState } from 'preact/hooks';
import { formatBytes } from '../shared/format.ts';
import { cacheAvailable, cachedModel, cacheTotal, deleteCachedModel, type CacheReport } from './model-cache.ts';

interface CacheStatusProps {
  host: string;
  model: string;
  /** Changes whenever the cache may have changed (a load ended), to look again. */
  refreshKey: string;
  /** Whether `model` is the one loaded now (deleting it does not unload it). */
  loaded: boolean;
}

/**
 * What this browser stores of a model, and a way to free the space: every file under the model's
 * folder, external data (`onnx/<graph>_data`, `_data_1`, …) included, each with its size.
 */
export function CacheStatus({ host, model, refreshKey, loaded }: CacheStatusProps) {
  const [report, setReport] = useState<CacheReport | null>(null);
  const [total, setTotal] = useState<{ entries: number; bytes: number } | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    Promise.all([cachedModel(host, model), cacheTotal()]).then(
      ([r, t]) => {
        if (!live) return;
        setReport(r);
        setTotal(t);
      },
      (e: unknown) => live && setMessage(`The cache could not be read: ${(e as Error).message ?? e}`),
    );
    return () => {
      live = false;
    };
  }, [host, model, refreshKey, tick]);

  if (!cacheAvailable()) {
    return <p class="muted">This browser offers no Cache API here, so models are downloaded again on every visit.</p>;
  }

  const remove = async () => {
    setBusy(true);
    try {
      const n = await deleteCachedModel(host, model);
      setMessage(`Deleted ${n} file${n === 1 ? '' : 's'} of ${model} from this browser.${loaded ? ' The model stays loaded in this tab until you reload or load another.' : ''}`);
    } catch (e) {
      setMessage(`Deleting failed: ${(e as Error).message ?? e}`);
    } finally {
      setBusy(false);
      setTick((t) => t + 1);
    }
  };

  const files = report?.files ?? [];
  return (
    <div class="cache" data-testid="cache-status" data-files={String(files.length)}>
      <p>
        {report === null ? (
          'Looking in the cache…'
        ) : files.length === 0 ? (
          <>Nothing of this model is stored in this browser yet.</>
        ) : (
          <>
            <strong>{formatBytes(report.bytes)}</strong> stored in this browser ({files.length} file{files.length === 1 ? '' : 's'}).
          </>
        )}
      </p>
      {files.length > 0 && (
        <details>
          <summary>Stored files</summary>
          <ul class="plain-list">
            {files.map((f) => (
              <li key={f.url} data-testid="cached-file" data-file={f.file} data-bytes={String(f.bytes)}>
                <span class="file-name">{f.file}</span> <span class="muted">{formatBytes(f.bytes)}</span>
              </li>
            ))}
          </ul>
        </details>
      )}
      <div class="row">
        <button type="button" class="button small danger" onClick={remove} disabled={busy || files.length === 0} aria-label={`Delete ${model} from the cache`}>
          Delete from cache
        </button>
        {total && <span class="muted small-text">This page's whole cache: {formatBytes(total.bytes)}</span>}
      </div>
      <p role="status" class="small-text">
        {message}
      </p>
    </div>
  );
}
