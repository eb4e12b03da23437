import type { ExtractionAnswer, ExtractionResponse, ExtractionSource } from '../../contract/extraction-response.ts';
import { JsonDetails } from '../shared/json-details.tsx';
import { formatMs } from '../shared/format.ts';
import { ProbabilityBars } from '../shared/probability-bars.tsx';
import { HighlightedState } from './highlighted-state.tsx';

export interface ExtractionRun {
  request: unknown;
  /** The state's parts as sent (the tab sends one text part). */
  parts: string[];
  response: ExtractionResponse;
  latencyMs: number;
}

const showValue = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
const where = (s: ExtractionSource | undefined): string => (s ? `part ${s.part}, characters ${s.start}–${s.end}` : 'not found in the state');

function AnswerRow({ fieldKey, answer }: { fieldKey: string; answer: ExtractionAnswer }) {
  if (answer.type === 'refusal') {
    return (
      <article class="answer-card" data-testid="extract-answer" data-key={fieldKey} data-type="refusal">
        <h3 class="mono">{fieldKey}</h3>
        <p class="muted">Refused: no well-typed value can be written with this model's tokens.</p>
      </article>
    );
  }
  const absent = answer.value === null;
  return (
    <article class="answer-card" data-testid="extract-answer" data-key={fieldKey} data-type={answer.type} data-pnull={String(answer.pNull)} data-confidence={String(answer.confidence)}>
      <h3>
        <span class="mono">{fieldKey}</span> <span class="muted small-text">{answer.type}</span>
      </h3>
      <p data-testid="extract-value">
        {absent ? (
          <>
            <strong>Absent</strong> <span class="muted">(best guess if present: {showValue(answer.guess)})</span>
          </>
        ) : (
          <strong class="mono">{showValue(answer.value)}</strong>
        )}
      </p>
      <ProbabilityBars
        caption={`${fieldKey}: probability absent and confidence`}
        chosen={null}
        bars={[
          { key: 'pNull', label: 'Absent (pNull)', p: answer.pNull },
          { key: 'confidence', label: 'Confidence', p: answer.confidence },
        ]}
      />
      {answer.type === 'list' ? (
        <ol class="small-text" data-testid="extract-items">
          {answer.guess.map((item, i) => (
            <li key={i}>
              <span class="mono">{showValue(item)}</span> · confidence {(answer.items?.[i]?.confidence ?? 0).toFixed(3)} · {where(answer.items?.[i]?.source)}
            </li>
          ))}
        </ol>
      ) : (
        <p class="small-text muted" data-testid="extract-source">
          Source: {where(answer.source)}
        </p>
      )}
    </article>
  );
}

/** The answers: the state with every value marked where it came from, then one card per field. */
export function ExtractionResults({ run }: { run: ExtractionRun }) {
  const { response } = run;
  return (
    <section class="stack" data-testid="extract-result" aria-labelledby="extract-result-h">
      <h2 id="extract-result-h">Extracted</h2>
      <HighlightedState parts={run.parts} answers={response.answers} />
      <div class="answers">
        {Object.entries(response.answers).map(([key, answer]) => (
          <AnswerRow key={key} fieldKey={key} answer={answer} />
        ))}
      </div>
      <p class="muted small-text" data-testid="extract-stats">
        Input tokens {response.usage.input_tokens} · output tokens {response.usage.output_tokens} · <span data-testid="latency">{formatMs(run.latencyMs)}</span>
      </p>
      <JsonDetails summary="Request JSON" value={run.request} testId="extract-raw-request" />
      <JsonDetails summary="Response JSON" value={response} testId="extract-raw-response" />
    </section>
  );
}
