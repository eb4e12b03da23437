import type { QuestionType } from '../../contract/index.ts';
import { useFocusAfterRender } from '../shared/focus-after-render.ts';
import { emptyDraft, freshKey, type QuestionDraft } from '../state/question-draft.ts';
import type { DecisionErrors } from './decision-errors.ts';
import { QuestionEditor } from './question-editor.tsx';

const NEW_KEYS: Record<QuestionType, string> = { noul: 'is_it', choice: 'which', score: 'how_much' };

/** The questions of the decision, and buttons to add one of each type. */
export function QuestionList({ drafts, errors, onChange }: { drafts: QuestionDraft[]; errors: DecisionErrors; onChange(next: QuestionDraft[]): void }) {
  const focus = useFocusAfterRender();
  const add = (type: QuestionType) => {
    const draft = emptyDraft(type, freshKey(drafts, NEW_KEYS[type]));
    focus(`q-${draft.id}-key`);
    onChange([...drafts, draft]);
  };
  const remove = (index: number) => {
    const next = drafts.filter((_, i) => i !== index);
    const neighbour = next[index] ?? next[index - 1];
    focus(neighbour ? `q-${neighbour.id}-key` : 'add-noul');
    onChange(next);
  };
  return (
    <div class="question-list">
      {drafts.length === 0 && <p class="muted">No questions yet: add one below, or start from a preset.</p>}
      {drafts.map((d, i) => (
        <QuestionEditor
          key={d.id}
          draft={d}
          index={i}
          errors={errors.questions[d.id] ?? {}}
          onChange={(changed) => onChange(drafts.map((x) => (x.id === d.id ? changed : x)))}
          onRemove={() => remove(i)}
        />
      ))}
      <div class="row add-row" role="group" aria-label="Add a question">
        <button type="button" id="add-noul" class="button small" aria-label="Add a true/false question" onClick={() => add('noul')}>
          + True / false
        </button>
        <button type="button" class="button small" aria-label="Add a choice question" onClick={() => add('choice')}>
          + Choice
        </button>
        <button type="button" class="button small" aria-label="Add a score question" onClick={() => add('score')}>
          + Score
        </button>
      </div>
    </div>
  );
}
