import { useEffect, useState } from 'preact/hooks';
import { FieldError } from '../shared/field-error.tsx';
import { wideScreen } from '../shared/wide-screen.ts';
import type { ChatSettings } from './chat-store.ts';

/** Errors about the settings, by setting. */
export type SettingErrors = Partial<Record<'system' | 'temperature' | 'topP' | 'maxTokens' | 'seed', string>>;

interface NumberSpec {
  name: 'temperature' | 'topP' | 'maxTokens' | 'seed';
  label: string;
  hint: string;
  min?: number;
  max?: number;
  step: string;
}

const NUMBERS: readonly NumberSpec[] = [
  { name: 'temperature', label: 'Temperature', hint: '0 to 2; 0 always picks the likeliest token', min: 0, max: 2, step: '0.1' },
  { name: 'topP', label: 'Top p', hint: 'above 0, at most 1; smaller is more focused', min: 0, max: 1, step: '0.05' },
  { name: 'maxTokens', label: 'Max tokens', hint: 'the longest reply; empty: up to the context end', min: 1, step: '1' },
  { name: 'seed', label: 'Seed', hint: 'optional; the same seed repeats a reply', step: '1' },
];

/** `reasoning_effort` values, and what the select shows for them ('' sends none: the model's default). */
const REASONING_CHOICES: readonly [string, string][] = [
  ['', "Model's default"],
  ['none', 'Off (none)'],
  ['minimal', 'Off (minimal)'],
  ['low', 'On (low)'],
  ['medium', 'On (medium)'],
  ['high', 'On (high)'],
];

interface Props {
  settings: ChatSettings;
  errors: SettingErrors;
  onChange(next: ChatSettings): void;
}

/** The system prompt and the sampling settings of the chat. */
export function ChatSettingsForm({ settings, errors, onChange }: Props) {
  const set = (change: Partial<ChatSettings>) => onChange({ ...settings, ...change });
  const hasError = Object.values(errors).some(Boolean);
  // Open where there is room; on a phone the conversation comes first.
  const [open, setOpen] = useState(wideScreen);
  // An error about a setting must be seen: open the settings where it is.
  useEffect(() => {
    if (hasError) setOpen(true);
  }, [hasError]);
  return (
    <details class="chat-settings" open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Settings</summary>
      <div class="stack">
        <div class="field">
          <label for="chat-system">System prompt</label>
          <textarea
            id="chat-system"
            rows={2}
            value={settings.system}
            aria-invalid={errors.system ? true : undefined}
            aria-describedby={errors.system ? 'chat-system-error' : undefined}
            onInput={(e) => set({ system: e.currentTarget.value })}
          />
          <FieldError id="chat-system-error" message={errors.system} />
        </div>
        <div class="settings-grid">
          {NUMBERS.map((spec) => {
            const id = `chat-${spec.name}`;
            const error = errors[spec.name];
            return (
              <div class="field" key={spec.name}>
                <label for={id}>{spec.label}</label>
                <input
                  id={id}
                  type="number"
                  inputMode="decimal"
                  min={spec.min}
                  max={spec.max}
                  step={spec.step}
                  value={settings[spec.name]}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `${id}-error` : `${id}-hint`}
                  onInput={(e) => set({ [spec.name]: e.currentTarget.value })}
                />
                <p class="hint" id={`${id}-hint`}>
                  {spec.hint}
                </p>
                <FieldError id={`${id}-error`} message={error} />
              </div>
            );
          })}
        </div>
        <div class="field">
          <label for="chat-reasoning">Thinking</label>
          <select
            id="chat-reasoning"
            value={settings.reasoningEffort ?? ''}
            aria-describedby="chat-reasoning-hint"
            onChange={(e) => set({ reasoningEffort: e.currentTarget.value })}
          >
            {REASONING_CHOICES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
          <p class="hint" id="chat-reasoning-hint">
            reasoning_effort, for a thinking model (Qwen3): none and minimal turn thinking off, low to high on
          </p>
        </div>
        <label class="check">
          <input type="checkbox" checked={settings.dropOldest} onChange={(e) => set({ dropOldest: e.currentTarget.checked })} />
          When the conversation outgrows the model's context, drop the oldest turns (else it is refused)
        </label>
      </div>
    </details>
  );
}
