interface Props {
  /** The form's error (one not about a field), shown above the buttons. */
  error: string | null | undefined;
  /** The error's `data-testid`. */
  errorTestId: string;
  busy: boolean;
  /** The submit button is disabled (besides while busy): nothing to send. */
  empty: boolean;
  /** The submit button's words, idle and busy: `['Decide', 'Deciding…']`. */
  labels: readonly [string, string];
  /** What the status line says while busy; when idle it says `notice`. */
  busyNote: string;
  notice: string | null;
  onCancel(): void;
}

/** The foot of a form that runs a request: its error, the submit button, Cancel while it runs, and a status line. */
export function RunBar({ error, errorTestId, busy, empty, labels, busyNote, notice, onCancel }: Props) {
  return (
    <>
      {error && (
        <p class="form-error" role="alert" data-testid={errorTestId}>
          {error}
        </p>
      )}
      <div class="row">
        <button type="submit" class="button primary" disabled={busy || empty}>
          {busy ? labels[1] : labels[0]}
        </button>
        {busy && (
          <button type="button" class="button" onClick={onCancel}>
            Cancel
          </button>
        )}
        <span role="status" class="muted small-text">
          {busy ? busyNote : notice}
        </span>
      </div>
    </>
  );
}
