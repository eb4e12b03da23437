import type { QuestionDraft } from '../state/question-draft.ts';

interface Props {
  draft: QuestionDraft;
  onChange(noul: QuestionDraft['noul']): void;
  describedBy: string | undefined;
}

/** The two descriptions of a true/false question: when it holds, and when it does not. */
export function NoulCriteria({ draft, onChange, describedBy }: Props) {
  const id = `q-${draft.id}`;
  return (
    <div class="criteria noul-criteria">
      <div class="field">
        <label for={`${id}-true`}>True when…</label>
        <input
          id={`${id}-true`}
          type="text"
          value={draft.noul.true}
          placeholder="e.g. They ask for help now"
          aria-describedby={describedBy}
          onInput={(e) => onChange({ ...draft.noul, true: e.currentTarget.value })}
        />
      </div>
      <div class="field">
        <label for={`${id}-false`}>False when…</label>
        <input
          id={`${id}-false`}
          type="text"
          value={draft.noul.false}
          placeholder="e.g. It can wait"
          aria-describedby={describedBy}
          onInput={(e) => onChange({ ...draft.noul, false: e.currentTarget.value })}
        />
      </div>
    </div>
  );
}
