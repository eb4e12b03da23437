import { formatBytes } from '../shared/format.ts';
import type { FileProgress, LoadProgress } from '../state/load-progress.ts';

function fileBytes(f: FileProgress): string {
  const loaded = f.done ? Math.max(f.loaded, f.total) : f.loaded;
  return f.total ? `${formatBytes(loaded)} of ${formatBytes(f.total)}` : formatBytes(loaded);
}

/**
 * The download of a model: one bar for all of it, and one per file. A bar is full only once
 * every file it counts is in; with no file begun there is no bar (never "0 B of 0 B", full);
 * after a failed load it shows how far the download got.
 */
export function ProgressList({ progress, active, failed = false }: { progress: LoadProgress; active: boolean; failed?: boolean }) {
  const files = progress.files.value;
  const totals = progress.totals.value;
  const notes = progress.notes.value;
  if (files.length === 0 && notes.length === 0) return null;
  const complete = !active && !failed && files.length > 0 && totals.done === totals.files;
  const state = active ? 'Downloading' : complete ? 'Downloaded' : 'Download stopped';
  return (
    <div class="progress" data-testid="load-progress" data-complete={String(complete)}>
      {notes.map((n) => (
        <p class="note" role="status" key={n}>
          {n}
        </p>
      ))}
      {files.length > 0 && (
        <div class="progress-total">
          <div class="progress-label">
            <span id="progress-total-label">{state}</span>
            <span class="muted" data-testid="progress-total-bytes">
              {formatBytes(totals.loaded)} of {formatBytes(totals.total)} · {totals.done}/{totals.files} files
            </span>
          </div>
          <progress
            aria-labelledby="progress-total-label"
            data-testid="progress-total"
            max={Math.max(totals.total, 1)}
            value={complete ? Math.max(totals.total, 1) : totals.loaded}
          />
        </div>
      )}
      {files.length > 0 && (
        <details class="file-list" open={active}>
          <summary>Files</summary>
          <ul aria-label="Model files">
            {files.map((f) => (
              <li key={f.file} data-testid="file-progress" data-done={String(f.done)}>
                <div class="progress-label">
                  <span class="file-name">{f.file}</span>
                  <span class="muted">{fileBytes(f)}</span>
                </div>
                <progress aria-label={`${f.file}: ${fileBytes(f)}`} max={Math.max(f.total, 1)} value={f.done ? Math.max(f.total, 1) : f.loaded} />
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
