import { useState } from 'preact/hooks';
import { CopyButton } from './copy-button.tsx';
import type { Snippet, SnippetKind } from './snippets.ts';

/** The request on screen as code: curl, fetch and (for chat) the openai client. */
export function CodeSnippets({ snippets, note }: { snippets: readonly Snippet[]; note?: string }) {
  const [kind, setKind] = useState<SnippetKind>(snippets[0]?.kind ?? 'curl');
  const shown = snippets.find((s) => s.kind === kind) ?? snippets[0];
  if (!shown) return null;
  return (
    <details class="snippets" data-testid="snippets">
      <summary>Use it from code</summary>
      <div class="segmented" role="group" aria-label="Snippet language">
        {snippets.map((s) => (
          <button type="button" key={s.kind} aria-pressed={s.kind === shown.kind} onClick={() => setKind(s.kind)}>
            {s.label}
          </button>
        ))}
      </div>
      {note && <p class="muted small-text">{note}</p>}
      <div class="code-box">
        <CopyButton text={shown.code} label={`Copy ${shown.label} snippet`} />
        <pre class="code" data-testid="snippet-code" data-kind={shown.kind}>
          <code>{shown.code}</code>
        </pre>
      </div>
    </details>
  );
}
