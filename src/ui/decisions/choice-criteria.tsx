import { useFocusAfterRender } from '../shared/focus-after-render.ts';
import { option, type OptionRow, type QuestionDraft } from '../state/question-draft.ts';

interface Props {
  draft: QuestionDraft;
  onChange(options: OptionRow[]): void;
  describedBy: string | undefined;
}

/** The options of a choice question: a key and what it means, one row each. */
export function ChoiceCriteria({ draft, onChange, describedBy }: Props) {
  // Focus moves once the change is rendered (a new row, or the neighbour of a removed one).
  const focus = useFocusAfterRender();
  const setFocusRow = (id: string | null) => focus(id === null ? null : `opt-${id}-key`);
  const rows = draft.options;
  const update = (id: string, change: Partial<OptionRow>) => onChange(rows.map((r) => (r.id === id ? { ...r, ...change } : r)));
  const add = () => {
    const row = option();
    onChange([...rows, row]);
    setFocusRow(row.id);
  };
  const remove = (index: number) => {
    onChange(rows.filter((_, i) => i !== index));
    const next = rows[index + 1] ?? rows[index - 1];
    setFocusRow(next ? next.id : null);
  };
  return (
    <fieldset class="criteria choice-criteria" aria-describedby={describedBy}>
      <legend>Options</legend>
      <div class="rows">
        <div class="row-head" aria-hidden="true">
          <span>Key</span>
          <span>What it means</span>
        </div>
        {rows.map((r, i) => (
          <div class="option-row" key={r.id} data-testid="option-row">
            <label class="visually-hidden" for={`opt-${r.id}-key`}>
              Option {i + 1} key
            </label>
            <input id={`opt-${r.id}-key`} type="text" class="mono" value={r.key} placeholder="key" onInput={(e) => update(r.id, { key: e.currentTarget.value })} />
            <label class="visually-hidden" for={`opt-${r.id}-desc`}>
              Option {i + 1} meaning
            </label>
            <input id={`opt-${r.id}-desc`} type="text" value={r.description} placeholder="optional" onInput={(e) => update(r.id, { description: e.currentTarget.value })} />
            <button type="button" class="icon-button" onClick={() => remove(i)} aria-label={`Remove option ${i + 1}${r.key ? ` (${r.key})` : ''}`} title="Remove">
              ×
            </button>
          </div>
        ))}
      </div>
      <button type="button" class="button small" onClick={add}>
        + Add option
      </button>
    </fieldset>
  );
}
