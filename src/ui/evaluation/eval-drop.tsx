/**
 * Where a labelled set comes in: a drop zone around a file input (.jsonl or .csv). The file is
 * read in the page; nothing is uploaded anywhere.
 */
import { useState } from 'preact/hooks';

export function EvalDrop({ onFile, disabled }: { onFile(file: File): void; disabled: boolean }) {
  const [over, setOver] = useState(false);
  const take = (files: FileList | null | undefined) => {
    const file = files?.[0];
    if (file && !disabled) onFile(file);
  };
  return (
    <div
      class={over ? 'drop-zone over' : 'drop-zone'}
      data-testid="eval-drop"
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = disabled ? 'none' : 'copy';
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        take(e.dataTransfer?.files);
      }}
    >
      <label for="eval-file">Labelled set: drop a .jsonl or .csv file here, or choose one</label>
      <input
        id="eval-file"
        type="file"
        accept=".jsonl,.ndjson,.csv,application/x-ndjson,text/csv"
        disabled={disabled}
        aria-describedby="eval-file-hint"
        onChange={(e) => {
          take(e.currentTarget.files);
          e.currentTarget.value = ''; // the same file chosen again is read again
        }}
      />
      <p id="eval-file-hint" class="hint">
        JSONL: one decision request per line plus <code>labels</code>, e.g.{' '}
        <code>{'{"state":"…","questions":{…},"labels":{"team":"billing"}}'}</code>. CSV: a <code>state</code> column, an optional{' '}
        <code>id</code>, and one column per question key of the form above, holding the expected answer.
      </p>
    </div>
  );
}
