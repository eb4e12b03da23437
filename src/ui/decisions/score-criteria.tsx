import { useFocusAfterRender } from '../shared/focus-after-render.ts';
import { grade, type GradeRow, type QuestionDraft } from '../state/question-draft.ts';

interface Props {
  draft: QuestionDraft;
  onChange(grades: GradeRow[]): void;
  describedBy: string | undefined;
}

/** The grade labels of a score question, lowest first: a grade's position is its score. */
export function ScoreCriteria({ draft, onChange, describedBy }: Props) {
  // Focus moves once the change is rendered, so the keyboard stays where the person works.
  const setFocus = useFocusAfterRender();
  const rows = draft.grades;
  const move = (from: number, to: number, focusButton: 'up' | 'down') => {
    if (to < 0 || to >= rows.length) return;
    const next = [...rows];
    const [row] = next.splice(from, 1);
    next.splice(to, 0, row!);
    onChange(next);
    // Keep the keyboard on the moved row (on the other button where this one is now disabled).
    const edge = focusButton === 'up' ? to === 0 : to === rows.length - 1;
    setFocus(`grade-${row!.id}-${edge ? (focusButton === 'up' ? 'down' : 'up') : focusButton}`);
  };
  const add = () => {
    const row = grade();
    onChange([...rows, row]);
    setFocus(`grade-${row.id}-label`);
  };
  const remove = (index: number) => {
    const next = rows[index + 1] ?? rows[index - 1];
    onChange(rows.filter((_, i) => i !== index));
    setFocus(next ? `grade-${next.id}-label` : null);
  };
  return (
    <fieldset class="criteria score-criteria" aria-describedby={describedBy}>
      <legend>Grades, lowest first (the position is the score)</legend>
      <ol class="rows">
        {rows.map((r, i) => (
          <li class="grade-row" key={r.id} data-testid="grade-row">
            <span class="grade-index" aria-hidden="true">
              {i}
            </span>
            <label class="visually-hidden" for={`grade-${r.id}-label`}>
              Grade {i} label
            </label>
            <input id={`grade-${r.id}-label`} type="text" value={r.label} placeholder={`label for ${i}`} onInput={(e) => onChange(rows.map((g) => (g.id === r.id ? { ...g, label: e.currentTarget.value } : g)))} />
            <button type="button" id={`grade-${r.id}-up`} class="icon-button" onClick={() => move(i, i - 1, 'up')} disabled={i === 0} aria-label={`Move grade ${i}${r.label ? ` (${r.label})` : ''} up`} title="Move up">
              ↑
            </button>
            <button type="button" id={`grade-${r.id}-down`} class="icon-button" onClick={() => move(i, i + 1, 'down')} disabled={i === rows.length - 1} aria-label={`Move grade ${i}${r.label ? ` (${r.label})` : ''} down`} title="Move down">
              ↓
            </button>
            <button type="button" class="icon-button" onClick={() => remove(i)} aria-label={`Remove grade ${i}${r.label ? ` (${r.label})` : ''}`} title="Remove">
              ×
            </button>
          </li>
        ))}
      </ol>
      <button type="button" class="button small" onClick={add}>
        + Add grade
      </button>
    </fieldset>
  );
}
