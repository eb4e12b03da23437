import { durationUnits, fieldTypes, listItemTypes, maxDecimals, type FieldType, type ListItemType } from '../../contract/extraction-request.ts';
import { CardHead } from '../shared/card-head.tsx';
import { FieldError } from '../shared/field-error.tsx';
import { TextField } from '../shared/text-field.tsx';
import { FIELD_TYPE_LABELS, hasNumberFormat, hasUnit, type FieldDraft, type FieldPart } from './field-draft.ts';

interface Props {
  draft: FieldDraft;
  index: number;
  errors: Partial<Record<FieldPart | 'other', string>>;
  onChange(draft: FieldDraft): void;
  onRemove(): void;
}

/** One field of the extraction: its key, type, instructions, and the options its type reads (unit, decimals, items). */
export function FieldEditor({ draft, index, errors, onChange, onRemove }: Props) {
  const id = `f-${draft.id}`;
  const err = (part: FieldPart) => (errors[part] ? `${id}-${part}-error` : undefined);
  const set = (change: Partial<FieldDraft>) => onChange({ ...draft, ...change });
  const title = draft.key.trim() || `field ${index + 1}`;
  const setType = (type: FieldType) => set({ type, ...(type === 'duration' && !(durationUnits as readonly string[]).includes(draft.unit) ? { unit: 'minutes' } : {}) });
  return (
    <article class="question-card extract-field" aria-label={`Field ${title}`} data-testid="extract-field" data-key={draft.key}>
      <CardHead
        id={id}
        keyValue={draft.key}
        keyError={errors.key}
        type={draft.type}
        types={fieldTypes}
        typeLabels={FIELD_TYPE_LABELS}
        typeError={errors.type}
        onKey={(key) => set({ key })}
        onType={setType}
        noun="field"
        title={title}
        onRemove={onRemove}
      />
      <TextField
        id={`${id}-instructions`}
        label="Instructions"
        value={draft.instructions}
        placeholder="What should the model find?"
        error={errors.instructions}
        onInput={(instructions) => set({ instructions })}
      />
      <div class="row field-options">
        {draft.type === 'list' && (
          <div class="field">
            <label for={`${id}-items`}>Items</label>
            <select id={`${id}-items`} value={draft.items} aria-describedby={err('items')} onChange={(e) => set({ items: e.currentTarget.value as ListItemType })}>
              {listItemTypes.map((t) => (
                <option value={t} key={t}>
                  {t}
                </option>
              ))}
            </select>
          </div>
        )}
        {hasUnit(draft.type) &&
          (draft.type === 'duration' ? (
            <div class="field">
              <label for={`${id}-unit`}>Unit</label>
              <select id={`${id}-unit`} value={draft.unit} aria-describedby={err('unit')} onChange={(e) => set({ unit: e.currentTarget.value })}>
                {durationUnits.map((u) => (
                  <option value={u} key={u}>
                    {u}
                  </option>
                ))}
              </select>
            </div>
          ) : (
            <div class="field">
              <label for={`${id}-unit`}>Unit</label>
              <input
                id={`${id}-unit`}
                type="text"
                value={draft.unit}
                placeholder="e.g. EUR, kg (optional)"
                aria-invalid={errors.unit ? true : undefined}
                aria-describedby={err('unit')}
                onInput={(e) => set({ unit: e.currentTarget.value })}
              />
            </div>
          ))}
        {hasNumberFormat(draft.type, draft.items) && (
          <>
            <label class="check">
              <input type="checkbox" checked={draft.integer} onChange={(e) => set({ integer: e.currentTarget.checked })} />
              Integer
            </label>
            <div class="field">
              <label for={`${id}-decimals`}>Decimals</label>
              <input
                id={`${id}-decimals`}
                type="text"
                inputMode="numeric"
                value={draft.integer ? '0' : draft.decimals}
                disabled={draft.integer}
                placeholder={`0–${maxDecimals} (default ${maxDecimals})`}
                aria-invalid={errors.decimals ? true : undefined}
                aria-describedby={err('decimals')}
                onInput={(e) => set({ decimals: e.currentTarget.value })}
              />
            </div>
          </>
        )}
      </div>
      <FieldError id={`${id}-unit-error`} message={errors.unit} />
      <FieldError id={`${id}-items-error`} message={errors.items} />
      <FieldError id={`${id}-decimals-error`} message={errors.decimals} />
      <FieldError id={`${id}-other-error`} message={errors.other} />
    </article>
  );
}
