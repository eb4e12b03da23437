import { FieldError } from '../shared/field-error.tsx';
import { readSchemaText } from './structured-draft.ts';

interface Props {
  id: string;
  label: string;
  value: string;
  hint: string;
  /** Empty text is allowed (a tool without parameters). */
  optional?: boolean;
  /** Why the last request was refused, when it was about this schema (the engine's words). */
  error?: string | undefined;
  onChange(text: string): void;
}

/**
 * A JSON schema typed as text, checked as it is typed: what is wrong with it shows under it
 * (quietly: a screen reader hears it on reaching the field, not at every key).
 */
export function SchemaEditor({ id, label, value, hint, optional, error, onChange }: Props) {
  const read = readSchemaText(value);
  const problem = read.ok || (optional && read.empty) ? null : read.error;
  const describedBy = [`${id}-hint`, problem ? `${id}-problem` : null, error ? `${id}-error` : null].filter(Boolean).join(' ');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        class="mono schema-text"
        rows={8}
        spellcheck={false}
        autocapitalize="off"
        autocomplete="off"
        value={value}
        aria-invalid={problem || error ? true : undefined}
        aria-describedby={describedBy}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
      {problem && (
        <p class="field-error" id={`${id}-problem`} data-testid="schema-problem">
          {problem}
        </p>
      )}
      <FieldError id={`${id}-error`} message={error} />
      <p class="hint" id={`${id}-hint`}>
        {hint}
      </p>
    </div>
  );
}
