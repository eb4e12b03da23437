/**
 * The items a pass got wrong, so a person can read them: where each is in the file, what was
 * expected, what the model answered, the probability it gave the expected answer, and the start
 * of the state. Also the items whose request failed.
 */
import { useState } from 'preact/hooks';
import type { EvaluationMode } from '../../evaluation/types.ts';
import { DownloadButton } from '../shared/download-button.tsx';
import { formatPercent } from '../shared/format.ts';
import { modeLabel } from './eval-mode-label.ts';

/** Rows shown per pass at first, so that a long list does not run the page on for screens; "Show all" shows the rest. */
export const WRONG_SHOWN = 20;

/** A pass's wrong answers as JSON Lines, one row a line, every field (the state whole). */
function wrongJsonl(mode: EvaluationMode): string {
  return mode.wrong.map((w) => JSON.stringify(w)).join('\n') + '\n';
}

export function EvalWrong({ mode, index }: { mode: EvaluationMode; index: number }) {
  const [all, setAll] = useState(false);
  const shown = all ? mode.wrong : mode.wrong.slice(0, WRONG_SHOWN);
  const fileName = `wrong-${modeLabel(mode).replace(/[^\w]+/g, '-').replace(/^-|-$/g, '')}.jsonl`;
  return (
    <details class="eval-wrong" open={index === 0} data-testid="eval-wrong" data-mode={index}>
      <summary>
        Wrong answers, {modeLabel(mode)}: {mode.wrong.length}
        {mode.errors.length > 0 && `, and ${mode.errors.length} failed request${mode.errors.length === 1 ? '' : 's'}`}
      </summary>
      {mode.errors.length > 0 && (
        <ul class="plain-list item-errors" data-testid="eval-item-errors">
          {mode.errors.map((e) => (
            <li key={e.item} class="field-error">
              line {e.line}: {e.message}
            </li>
          ))}
        </ul>
      )}
      {shown.length === 0 ? (
        <p class="muted small-text">None.</p>
      ) : (
        <div class="table-scroll">
          <table class="wrong">
            <thead>
              <tr>
                <th scope="col">Line</th>
                <th scope="col">Id</th>
                <th scope="col">Question</th>
                <th scope="col">Expected</th>
                <th scope="col">Got</th>
                <th scope="col">p(expected)</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((w) => (
                <tr key={`${w.item}:${w.key}`} data-testid="wrong-item" data-line={w.line} data-key={w.key}>
                  <td>{w.line}</td>
                  <td class="mono">{w.id ?? '–'}</td>
                  <td class="mono">{w.key}</td>
                  <td>{w.expected}</td>
                  <td>{w.got}</td>
                  <td data-value={String(w.p_expected)}>{formatPercent(w.p_expected)}</td>
                  <td class="state-excerpt" title={w.state}>
                    {w.state}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {mode.wrong.length > 0 && (
        <div class="wrong-more">
          {mode.wrong.length > shown.length && (
            <>
              <span class="muted small-text" data-testid="wrong-count">
                The first {shown.length} of {mode.wrong.length}.
              </span>
              <button type="button" class="button small" onClick={() => setAll(true)}>
                Show all {mode.wrong.length}
              </button>
            </>
          )}
          <DownloadButton fileName={fileName} text={() => wrongJsonl(mode)} type="application/x-ndjson" label={`Download all ${mode.wrong.length} (JSONL)`} />
        </div>
      )}
    </details>
  );
}
