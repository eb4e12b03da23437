import type { QuestionType } from '../../contract/index.ts';
import { FieldError } from '../shared/field-error.tsx';
import type { QuestionDraft } from '../state/question-draft.ts';
import { ChoiceCriteria } from './choice-criteria.tsx';
import { NoulCriteria } from './noul-criteria.tsx';
import { ScoreCriteria } from './score-criteria.tsx';

/** Errors about one question, by the part of it they concern. */
export interface QuestionErrors {
  key?: string | undefined;
  type?: string | undefined;
  instructions?: string | undefined;
  criteria?: string | undefined;
  other?: string | undefined;
}

export const TYPE_LABELS: Record<QuestionType, string> = {
  noul: 'True / false',
  choice: 'Choice',
  score: 'Score',
};

interface Props {
  draft: QuestionDraft;
  index: number;
  errors: QuestionErrors;
  onChange(draft: QuestionDraft): void;
  onRemove(): void;
}

/** One question of the decision: its key, type, instructions and criteria. */
export function QuestionEditor({ draft, index, errors, onChange, onRemove }: Props) {
  const id = `q-${draft.id}`;
  const err = (part: keyof QuestionErrors) => (errors[part] ? `${id}-${part}-error` : undefined);
  const set = (change: Partial<QuestionDraft>) => onChange({ ...draft, ...change });
  const title = draft.key.trim() || `question ${index + 1}`;
  return (
    <article class={`question-card type-${draft.type}`} aria-label={`Question ${title}`} data-testid="question" data-key={draft.key}>
      <div class="question-head">
        <div class="field key-field">
          <label for={`${id}-key`}>Key</label>
          <input
            id={`${id}-key`}
            type="text"
            class="mono"
            value={draft.key}
            spellcheck={false}
            aria-invalid={errors.key ? true : undefined}
            aria-describedby={err('key')}
            onInput={(e) => set({ key: e.currentTarget.value })}
          />
        </div>
        <div class="field type-field">
          <label for={`${id}-type`}>Type</label>
          <select id={`${id}-type`} value={draft.type} aria-describedby={err('type')} onChange={(e) => set({ type: e.currentTarget.value as QuestionType })}>
            {(Object.keys(TYPE_LABELS) as QuestionType[]).map((t) => (
              <option value={t} key={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </select>
        </div>
        <button type="button" class="icon-button remove-question" onClick={onRemove} aria-label={`Remove question ${title}`} title="Remove question">
          ×
        </button>
      </div>
      <FieldError id={`${id}-key-error`} message={errors.key} />
      <FieldError id={`${id}-type-error`} message={errors.type} />
      <div class="field">
        <label for={`${id}-instructions`}>Instructions</label>
        <input
          id={`${id}-instructions`}
          type="text"
          value={draft.instructions}
          placeholder="What should the model decide?"
          aria-invalid={errors.instructions ? true : undefined}
          aria-describedby={err('instructions')}
          onInput={(e) => set({ instructions: e.currentTarget.value })}
        />
        <FieldError id={`${id}-instructions-error`} message={errors.instructions} />
      </div>
      {draft.type === 'noul' && <NoulCriteria draft={draft} describedBy={err('criteria')} onChange={(noul) => set({ noul })} />}
      {draft.type === 'choice' && <ChoiceCriteria draft={draft} describedBy={err('criteria')} onChange={(options) => set({ options })} />}
      {draft.type === 'score' && <ScoreCriteria draft={draft} describedBy={err('criteria')} onChange={(grades) => set({ grades })} />}
      <FieldError id={`${id}-criteria-error`} message={errors.criteria} />
      <FieldError id={`${id}-other-error`} message={errors.other} />
    </article>
  );
}
