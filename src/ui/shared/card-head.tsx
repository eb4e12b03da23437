import { FieldError } from './field-error.tsx';

interface Props<T extends string> {
  /** The card's id prefix: its inputs are `<id>-key` and `<id>-type`, their errors `<id>-key-error` and `<id>-type-error`. */
  id: string;
  keyValue: string;
  keyError: string | undefined;
  type: T;
  /** The types offered, in order, with their words. */
  types: readonly T[];
  typeLabels: Record<T, string>;
  typeError: string | undefined;
  onKey(key: string): void;
  onType(type: T): void;
  /** What the remove button removes, for its label and title: `question`, `field`. */
  noun: string;
  /** The card's title (its key, else `<noun> N`). */
  title: string;
  onRemove(): void;
}

/** The head of a question's or a field's card: its key, its type, the remove button, and their errors under them. */
export function CardHead<T extends string>({ id, keyValue, keyError, type, types, typeLabels, typeError, onKey, onType, noun, title, onRemove }: Props<T>) {
  return (
    <>
      <div class="question-head">
        <div class="field key-field">
          <label for={`${id}-key`}>Key</label>
          <input
            id={`${id}-key`}
            type="text"
            class="mono"
            value={keyValue}
            spellcheck={false}
            aria-invalid={keyError ? true : undefined}
            aria-describedby={keyError ? `${id}-key-error` : undefined}
            onInput={(e) => onKey(e.currentTarget.value)}
          />
        </div>
        <div class="field type-field">
          <label for={`${id}-type`}>Type</label>
          <select id={`${id}-type`} value={type} aria-describedby={typeError ? `${id}-type-error` : undefined} onChange={(e) => onType(e.currentTarget.value as T)}>
            {types.map((t) => (
              <option value={t} key={t}>
                {typeLabels[t]}
              </option>
            ))}
          </select>
        </div>
        <button type="button" class="icon-button remove-question" onClick={onRemove} aria-label={`Remove ${noun} ${title}`} title={`Remove ${noun}`}>
          ×
        </button>
      </div>
      <FieldError id={`${id}-key-error`} message={keyError} />
      <FieldError id={`${id}-type-error`} message={typeError} />
    </>
  );
}
