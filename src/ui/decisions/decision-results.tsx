import type { DecisionResponse } from '../../contract/index.ts';
import { formatMs } from '../shared/format.ts';
import { JsonDetails } from '../shared/json-details.tsx';
import { AnswerCard } from './answer-card.tsx';

export interface DecisionRun {
  request: {
    model: string;
    state: string;
    questions: Record<string, unknown>;
    calibrate?: boolean;
    calibration?: string;
    prediction_set?: { alpha: number };
    include?: string[];
  };
  response: DecisionResponse;
  latencyMs: number;
}

/** The answers of the last decision, with its usage, latency and the raw JSON both ways. */
export function DecisionResults({ run }: { run: DecisionRun }) {
  const { request, response, latencyMs } = run;
  const keys = [...Object.keys(request.questions).filter((k) => Object.hasOwn(response.answers, k)), ...Object.keys(response.answers).filter((k) => !Object.hasOwn(request.questions, k))];
  return (
    <section class="results" aria-labelledby="results-h" data-testid="decision-result">
      <h3 id="results-h">Answers</h3>
      <dl class="stats" data-testid="decision-stats">
        <div>
          <dt>Latency</dt>
          <dd data-testid="latency">{formatMs(latencyMs)}</dd>
        </div>
        <div>
          <dt>Input tokens</dt>
          <dd>{response.usage.input_tokens.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Output tokens</dt>
          <dd>{response.usage.output_tokens.toLocaleString('en')}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>${response.usage.cost.toFixed(2)}</dd>
        </div>
        <div>
          <dt>Device</dt>
          <dd>{response.provider}</dd>
        </div>
      </dl>
      <div class="answers">
        {keys.map((k) => (
          <AnswerCard key={k} questionKey={k} answer={response.answers[k]!} alpha={request.prediction_set?.alpha ?? null} />
        ))}
      </div>
      <p class="muted small-text">
        Model <span class="mono">{response.model}</span> · request id <span class="mono">{response.id}</span>
      </p>
      <JsonDetails summary="Request JSON" value={request} testId="raw-request" />
      <JsonDetails summary="Response JSON" value={response} testId="raw-response" />
    </section>
  );
}
