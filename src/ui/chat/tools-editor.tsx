import { useEffect, useState } from 'preact/hooks';
import { FieldError } from '../shared/field-error.tsx';
import { useFocusAfterRender } from '../shared/focus-after-render.ts';
import { wideScreen } from '../shared/wide-screen.ts';
import { newId } from '../state/new-id.ts';
import { SchemaEditor } from './schema-editor.tsx';
import { EXAMPLE_TOOL, schemaText } from './schema-examples.ts';
import { namedChoice, type StructuredDraft, type StructuredErrors, type ToolDraft } from './structured-draft.ts';

const CHOICES: readonly [string, string][] = [
  ['auto', 'auto: the model decides'],
  ['none', 'none: never call a tool'],
  ['required', 'required: call at least one'],
];

interface Props {
  draft: StructuredDraft;
  errors: StructuredErrors;
  onChange(next: StructuredDraft): void;
}

function ToolCard({ tool, index, errors, onChange, onRemove }: {
  tool: ToolDraft;
  index: number;
  errors: Partial<Record<'name' | 'description' | 'parameters' | 'other', string>>;
  onChange(t: ToolDraft): void;
  onRemove(): void;
}) {
  const id = `tool-${tool.id}`;
  const title = tool.name.trim() || `tool ${index + 1}`;
  const set = (change: Partial<ToolDraft>) => onChange({ ...tool, ...change });
  return (
    <li class="tool-card" aria-label={`Tool ${title}`} data-testid="tool" data-name={tool.name}>
      <div class="tool-head">
        <div class="field">
          <label for={`${id}-name`}>Function name</label>
          <input
            id={`${id}-name`}
            type="text"
            class="mono"
            spellcheck={false}
            autocapitalize="off"
            value={tool.name}
            aria-invalid={errors.name ? true : undefined}
            aria-describedby={errors.name ? `${id}-name-error` : undefined}
            onInput={(e) => set({ name: e.currentTarget.value })}
          />
        </div>
        <button type="button" class="icon-button" onClick={onRemove} aria-label={`Remove tool ${title}`} title="Remove tool">
          ×
        </button>
      </div>
      <FieldError id={`${id}-name-error`} message={errors.name} />
      <div class="field">
        <label for={`${id}-description`}>Description</label>
        <input
          id={`${id}-description`}
          type="text"
          value={tool.description}
          placeholder="What the function does (optional)"
          aria-invalid={errors.description ? true : undefined}
          aria-describedby={errors.description ? `${id}-description-error` : undefined}
          onInput={(e) => set({ description: e.currentTarget.value })}
        />
        <FieldError id={`${id}-description-error`} message={errors.description} />
      </div>
      <SchemaEditor
        id={`${id}-parameters`}
        label="Parameters"
        value={tool.parameters}
        optional
        hint="A JSON schema of the arguments (optional)."
        error={errors.parameters}
        onChange={(parameters) => set({ parameters })}
      />
      <FieldError id={`${id}-other-error`} message={errors.other} />
    </li>
  );
}

/** `tools` (function tools), `tool_choice` and `parallel_tool_calls`. */
export function ToolsEditor({ draft, errors, onChange }: Props) {
  const set = (change: Partial<StructuredDraft>) => onChange({ ...draft, ...change });
  const focusNext = useFocusAfterRender();
  const toolErrors = errors.tool ?? {};
  const hasError = Boolean(errors.tools || errors.toolChoice || errors.parallelToolCalls) || Object.keys(toolErrors).length > 0;
  const [open, setOpen] = useState(() => draft.tools.length > 0 && wideScreen());
  useEffect(() => {
    if (hasError) setOpen(true);
  }, [hasError]);
  const named = namedChoice(draft.toolChoice);

  const setTool = (t: ToolDraft) => set({ tools: draft.tools.map((x) => (x.id === t.id ? t : x)) });
  const add = (tool: ToolDraft) => {
    set({ tools: [...draft.tools, tool] });
    focusNext(`tool-${tool.id}-name`);
  };
  const remove = (t: ToolDraft) => {
    const tools = draft.tools.filter((x) => x.id !== t.id);
    // A choice of the removed tool falls back to auto rather than naming nothing.
    set({ tools, ...(named !== null && named === t.name ? { toolChoice: 'auto' } : {}) });
  };
  const addExample = () => {
    const taken = new Set(draft.tools.map((t) => t.name));
    let name: string = EXAMPLE_TOOL.name;
    for (let i = 2; taken.has(name); i++) name = `${EXAMPLE_TOOL.name}_${i}`;
    add({ id: newId(), name, description: EXAMPLE_TOOL.description, parameters: schemaText(EXAMPLE_TOOL.parameters) });
  };
  const choiceIsStale = named !== null && !draft.tools.some((t) => t.name === named);
  const summary = draft.tools.length === 0 ? 'none' : `${draft.tools.length} function${draft.tools.length === 1 ? '' : 's'}, tool_choice ${named ?? draft.toolChoice}`;

  return (
    <details class="chat-settings" open={open} onToggle={(e) => setOpen(e.currentTarget.open)} data-testid="tools-settings">
      <summary>
        Tools<span class="summary-note"> · {summary}</span>
      </summary>
      <div class="stack">
        {draft.tools.length === 0 ? (
          <p class="muted small-text">No tools: the model answers in words. Add a function the model may call.</p>
        ) : (
          <ul class="tool-list">
            {draft.tools.map((t, i) => (
              <ToolCard key={t.id} tool={t} index={i} errors={toolErrors[t.id] ?? {}} onChange={setTool} onRemove={() => remove(t)} />
            ))}
          </ul>
        )}
        <FieldError id="chat-tools-error" message={errors.tools} />
        <div class="row">
          <button type="button" class="button small" onClick={() => add({ id: newId(), name: '', description: '', parameters: '' })}>
            + Add a tool
          </button>
          <button type="button" class="button small" onClick={addExample}>
            + Example: get_weather
          </button>
        </div>
        {draft.tools.length > 0 && (
          <div class="field-row">
            <div class="field">
              <label for="chat-tool-choice">Tool choice</label>
              <select
                id="chat-tool-choice"
                value={draft.toolChoice}
                aria-invalid={errors.toolChoice ? true : undefined}
                aria-describedby={errors.toolChoice ? 'chat-tool-choice-error' : undefined}
                onChange={(e) => set({ toolChoice: e.currentTarget.value })}
              >
                {CHOICES.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
                {draft.tools
                  .filter((t) => t.name.trim() !== '')
                  .map((t) => (
                    <option key={t.id} value={`function:${t.name}`}>
                      {`${t.name}: call this one`}
                    </option>
                  ))}
                {choiceIsStale && <option value={draft.toolChoice}>{`${named} (no such tool)`}</option>}
              </select>
              <FieldError id="chat-tool-choice-error" message={errors.toolChoice} />
            </div>
            <div class="field">
              <label class="check parallel-check">
                <input
                  type="checkbox"
                  checked={draft.parallelToolCalls}
                  aria-invalid={errors.parallelToolCalls ? true : undefined}
                  aria-describedby={errors.parallelToolCalls ? 'chat-parallel-error' : undefined}
                  onChange={(e) => set({ parallelToolCalls: e.currentTarget.checked })}
                />
                Parallel tool calls (several calls in one reply)
              </label>
              <FieldError id="chat-parallel-error" message={errors.parallelToolCalls} />
            </div>
          </div>
        )}
      </div>
    </details>
  );
}
