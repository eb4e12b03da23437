import type { ChatEntry } from './chat-store.ts';
import { parseJson } from './tool-calls.ts';

/**
 * A reply asked for as JSON: once complete, its object pretty-printed with the raw text folded
 * under it; a reply cut short or not JSON says so in words, above its raw text.
 */
export function JsonReply({ entry }: { entry: ChatEntry }) {
  const raw = (
    <div class="message-text" data-testid="message-text">
      {entry.content}
      {entry.state === 'streaming' && <span class="caret" aria-hidden="true" />}
    </div>
  );
  if (entry.state === 'streaming') return raw;
  const parsed = parseJson(entry.content);
  const cut = entry.stats?.finishReason === 'length';
  if (parsed.ok && !cut) {
    return (
      <>
        <pre class="code reply-json" data-testid="reply-json">
          <code>{JSON.stringify(parsed.value, null, 2)}</code>
        </pre>
        <details class="raw-reply">
          <summary>Raw text</summary>
          {raw}
        </details>
      </>
    );
  }
  const why = cut
    ? 'The reply was cut at max_tokens; the JSON is incomplete.'
    : entry.state === 'stopped'
      ? 'The reply was stopped; the JSON is incomplete.'
      : parsed.ok
        ? null
        : `The reply is not valid JSON (${parsed.error}).`;
  return (
    <>
      {why && (
        <p class="reply-note" data-testid="json-note">
          {why}
        </p>
      )}
      {raw}
    </>
  );
}
