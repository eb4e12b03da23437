import { PRESETS, type DecisionPreset } from '../state/presets.ts';

/** Starting points: each fills the state and the questions; the last content can be brought back. */
export function PresetBar({ onPick, onUndo, undoLabel }: { onPick(p: DecisionPreset): void; onUndo: (() => void) | null; undoLabel: string | null }) {
  return (
    <div class="preset-bar">
      <div class="chips" role="group" aria-label="Presets">
        <span class="chips-label">Presets</span>
        {PRESETS.map((p) => (
          <button type="button" class="chip" key={p.id} onClick={() => onPick(p)}>
            {p.label}
          </button>
        ))}
      </div>
      <p class="small-text" role="status">
        {undoLabel && onUndo && (
          <>
            {undoLabel}{' '}
            <button type="button" class="link-button" onClick={onUndo}>
              Undo
            </button>
          </>
        )}
      </p>
    </div>
  );
}
