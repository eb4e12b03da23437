import type { LoadProgress } from './load-progress.ts';

const mb = (n: number) => `${(n / 1e6).toFixed(n < 1e6 ? 2 : 1)} MB`;

export function ProgressList({ progress }: { progress: LoadProgress }) {
  const files = progress.files.value;
  return (
    <div>
      {progress.notes.value.map((n) => (
        <p class="note" role="status">{n}</p>
      ))}
      <ul class="progress" aria-label="Model files">
        {files.map((f) => (
          <li key={f.file} data-testid="file-progress">
            <label>
              <span>{f.file}</span> <span>{f.total ? `${mb(f.loaded)} / ${mb(f.total)}` : mb(f.loaded)}</span>
              <progress max={f.total || 1} value={f.done ? f.total || 1 : f.loaded} />
            </label>
          </li>
        ))}
      </ul>
    </div>
  );
}
