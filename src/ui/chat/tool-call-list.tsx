import type { ChatToolCall } from '../../contract/index.ts';
import { FieldError } from '../shared/field-error.tsx';
import type { ChatEntry } from './chat-store.ts';
import { callKey, parseJson } from './tool-calls.ts';

function Arguments({ call, streaming }: { call: ChatToolCall; streaming: boolean }) {
  const text = call.function.arguments;
  const parsed = parseJson(text);
  if (parsed.ok) {
    return (
      <pre class="code tool-arguments" data-testid="tool-arguments">
        <code>{JSON.stringify(parsed.value, null, 2)}</code>
      </pre>
    );
  }
  return (
    <>
      {!streaming && text !== '' && <p class="reply-note">The arguments are not valid JSON ({parsed.error}).</p>}
      <pre class="code tool-arguments" data-testid="tool-arguments">
        <code>{text}</code>
      </pre>
    </>
  );
}

interface Props {
  entry: ChatEntry & { toolCalls: ChatToolCall[] };
  /** Whether the calls wait for their results (the conversation's last turn, complete). */
  answerable: boolean;
  errors: Record<string, string>;
  onResult(key: string, text: string): void;
  onSend(): void;
}

/** The tools a reply asks to call, each with its arguments, and (while they wait) a box for each result. */
export function ToolCallList({ entry, answerable, errors, onResult, onSend }: Props) {
  const calls = entry.toolCalls;
  const reason = entry.stats?.finishReason;
  const n = calls.length;
  return (
    <div class="tool-calls" data-testid="tool-calls">
      <p class="tool-calls-head">
        {n === 1 ? 'Asks to call a tool' : `Asks to call ${n} tools`}
        {reason && <span class="muted"> · finish_reason: {reason}</span>}
      </p>
      <ol class="tool-call-list">
        {calls.map((call, i) => {
          const key = callKey(call, i);
          const id = `result-${entry.id}-${i}`;
          const error = errors[key];
          return (
            <li key={key} class="tool-call" data-testid="tool-call" data-name={call.function.name}>
              <p class="tool-call-name">
                <code data-testid="tool-name">{call.function.name || '…'}</code>
                {call.id && <span class="muted small-text"> {call.id}</span>}
              </p>
              <Arguments call={call} streaming={entry.state === 'streaming'} />
              {answerable && (
                <div class="field tool-result-field">
                  <label for={id}>
                    Tool result<span class="visually-hidden"> for {call.function.name} (call {i + 1} of {n})</span>
                  </label>
                  <textarea
                    id={id}
                    class="mono"
                    rows={2}
                    spellcheck={false}
                    placeholder='e.g. {"temperature": 21}'
                    value={entry.toolResults?.[key] ?? ''}
                    aria-invalid={error ? true : undefined}
                    aria-describedby={error ? `${id}-error` : undefined}
                    onInput={(e) => onResult(key, e.currentTarget.value)}
                  />
                  <FieldError id={`${id}-error`} message={error} />
                </div>
              )}
            </li>
          );
        })}
      </ol>
      {answerable && (
        <button type="button" class="button small primary" onClick={onSend}>
          {n === 1 ? 'Send the tool result' : 'Send the tool results'}
        </button>
      )}
    </div>
  );
}
