import { useEffect, useState } from 'preact/hooks';
import { FieldError } from '../shared/field-error.tsx';
import { wideScreen } from '../shared/wide-screen.ts';
import { SchemaEditor } from './schema-editor.tsx';
import { SCHEMA_EXAMPLES, schemaText, type SchemaExample } from './schema-examples.ts';
import type { FormatKind, StructuredDraft, StructuredErrors } from './structured-draft.ts';

const FORMATS: readonly { kind: FormatKind; label: string; hint: string }[] = [
  { kind: 'text', label: 'Text', hint: 'Free text: no response_format is sent.' },
  { kind: 'json_object', label: 'JSON (json_object)', hint: 'The reply is one JSON object, of any shape.' },
  { kind: 'json_schema', label: 'JSON schema (json_schema)', hint: 'The reply is a JSON object that fits the schema below.' },
];

interface Props {
  draft: StructuredDraft;
  errors: StructuredErrors;
  onChange(next: StructuredDraft): void;
}

/** `response_format`: text, any JSON object, or JSON fitting a schema, with examples to load. */
export function ResponseFormatSettings({ draft, errors, onChange }: Props) {
  const set = (change: Partial<StructuredDraft>) => onChange({ ...draft, ...change });
  const [undo, setUndo] = useState<{ label: string; draft: StructuredDraft } | null>(null);
  const hasError = Boolean(errors.format || errors.schemaName || errors.schema);
  const [open, setOpen] = useState(() => draft.format !== 'text' && wideScreen());
  useEffect(() => {
    if (hasError) setOpen(true);
  }, [hasError]);
  const current = FORMATS.find((f) => f.kind === draft.format) ?? FORMATS[0]!;

  const choose = (format: FormatKind) => {
    // A schema chosen with nothing typed yet starts from the first example, not from a blank box.
    const first = SCHEMA_EXAMPLES[0]!;
    const blank = draft.schema.trim() === '' && draft.schemaName.trim() === '';
    set(format === 'json_schema' && blank ? { format, schemaName: first.name, schema: schemaText(first.schema) } : { format });
  };
  const load = (example: SchemaExample) => {
    setUndo({ label: `${example.label} loaded.`, draft });
    onChange({ ...draft, format: 'json_schema', schemaName: example.name, schema: schemaText(example.schema) });
  };
  const undoLoad = () => {
    if (undo) onChange({ ...draft, format: undo.draft.format, schemaName: undo.draft.schemaName, schema: undo.draft.schema });
    setUndo(null);
  };

  return (
    <details class="chat-settings" open={open} onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="format-settings">
      <summary>
        Response format
        <span class="summary-note">
          {' '}
          · {current.label}
          {draft.format === 'json_schema' && draft.schemaName.trim() !== '' ? `: ${draft.schemaName}` : ''}
        </span>
      </summary>
      <div class="stack">
        <div class="field">
          <label for="chat-format">Format</label>
          <select
            id="chat-format"
            value={draft.format}
            aria-invalid={errors.format ? true : undefined}
            aria-describedby={errors.format ? 'chat-format-hint chat-format-error' : 'chat-format-hint'}
            onChange={(e) => choose(e.currentTarget.value as FormatKind)}
          >
            {FORMATS.map((f) => (
              <option key={f.kind} value={f.kind}>
                {f.label}
              </option>
            ))}
          </select>
          <p class="hint" id="chat-format-hint">
            {current.hint}
          </p>
          <FieldError id="chat-format-error" message={errors.format} />
        </div>
        <div>
          <div class="chips" role="group" aria-label="Example schemas">
            <span class="chips-label">Example schemas</span>
            {SCHEMA_EXAMPLES.map((x) => (
              <button type="button" class="chip" key={x.id} onClick={() => load(x)}>
                {x.label}
              </button>
            ))}
          </div>
          <p class="small-text" role="status">
            {undo && (
              <>
                {undo.label}{' '}
                <button type="button" class="link-button" onClick={undoLoad}>
                  Undo
                </button>
              </>
            )}
          </p>
        </div>
        {draft.format === 'json_schema' && (
          <>
            <div class="field">
              <label for="chat-schema-name">Schema name</label>
              <input
                id="chat-schema-name"
                type="text"
                class="mono"
                spellcheck={false}
                autocapitalize="off"
                value={draft.schemaName}
                aria-invalid={errors.schemaName ? true : undefined}
                aria-describedby={errors.schemaName ? 'chat-schema-name-hint chat-schema-name-error' : 'chat-schema-name-hint'}
                onInput={(e) => set({ schemaName: e.currentTarget.value })}
              />
              <p class="hint" id="chat-schema-name-hint">
                json_schema.name: letters, digits, _ and -
              </p>
              <FieldError id="chat-schema-name-error" message={errors.schemaName} />
            </div>
            <SchemaEditor
              id="chat-schema"
              label="Schema"
              value={draft.schema}
              hint="JSON Schema, enforced while the model writes: type, properties, required, additionalProperties, enum, const, anyOf, items, min/maxItems, min/maxLength, pattern, format, $ref to $defs, integer ranges with both ends (docs/structured-output.md). Any other keyword is refused, naming it."
              error={errors.schema}
              onChange={(schema) => set({ schema })}
            />
          </>
        )}
      </div>
    </details>
  );
}
