import { FieldError } from './field-error.tsx';

interface Props {
  id: string;
  label: string;
  value: string;
  onInput(value: string): void;
  /** Shown beside the field, which is then marked invalid and points at it (`<id>-error`). */
  error: string | null | undefined;
  /** The id of a hint the field is also described by. */
  hintId?: string | undefined;
  disabled?: boolean | undefined;
  class?: string | undefined;
  placeholder?: string | undefined;
  inputMode?: 'text' | 'decimal' | 'numeric' | undefined;
}

/** A labelled one-line text input with its error beside it: the field form the panels repeat. */
export function TextField({ id, label, value, onInput, error, hintId, ...input }: Props) {
  const errorId = `${id}-error`;
  const describedBy = [hintId, error ? errorId : undefined].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input
        {...input}
        id={id}
        type="text"
        value={value}
        onInput={(e) => onInput(e.currentTarget.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy || undefined}
      />
      <FieldError id={errorId} message={error} />
    </div>
  );
}
