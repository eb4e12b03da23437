import { CopyButton } from './copy-button.tsx';

/** A value as JSON, folded away until asked for. */
export function JsonDetails({ summary, value, testId }: { summary: string; value: unknown; testId?: string }) {
  const text = JSON.stringify(value, null, 2);
  return (
    <details class="json-details" data-testid={testId}>
      <summary>{summary}</summary>
      <div class="code-box">
        <CopyButton text={text} label={`Copy ${summary.toLowerCase()}`} />
        <pre class="code">
          <code>{text}</code>
        </pre>
      </div>
    </details>
  );
}
