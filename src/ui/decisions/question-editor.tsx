import type { QuestionType } from '../../contract/index.ts';
import { CardHead } from '../shared/card-head.tsx';
import { FieldError } from '../shared/field-error.tsx';
import { TextField } from '../shared/text-field.tsx';
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
      <CardHead
        id={id}
        keyValue={draft.key}
        keyError={errors.key}
        type={draft.type}
        types={Object.keys(TYPE_LABELS) as QuestionType[]}
        typeLabels={TYPE_LABELS}
        typeError={errors.type}
        onKey={(key) => set({ key })}
        onType={(type) => set({ type })}
        noun="question"
        title={title}
        onRemove={onRemove}
      />
      <TextField
        id={`${id}-instructions`}
        label="Instructions"
        value={draft.instructions}
        placeholder="What should the model decide?"
        error={errors.instructions}
        onInput={(instructions) => set({ instructions })}
      />
      {draft.type === 'noul' && <NoulCriteria draft={draft} describedBy={err('criteria')} onChange={(noul) => set({ noul })} />}
      {draft.type === 'choice' && <ChoiceCriteria draft={draft} describedBy={err('criteria')} onChange={(options) => set({ options })} />}
      {draft.type === 'score' && <ScoreCriteria draft={draft} describedBy={err('criteria')} onChange={(grades) => set({ grades })} />}
      <FieldError id={`${id}-criteria-error`} message={errors.criteria} />
      <FieldError id={`${id}-other-error`} message={errors.other} />
    </article>
  );
}
