import { useState } from 'preact/hooks';
import type { DecisionResponse } from '../contract/index.ts';
import type { JevClient } from '../facade/jev-client.ts';

const EXAMPLE_QUESTIONS = {
  urgent: { type: 'noul', instructions: 'Is the customer asking for urgent help?', criteria: { true: 'They need help now', false: 'It can wait' } },
  department: { type: 'choice', instructions: 'Which team should handle this?', criteria: { billing: 'Invoices and payments', technical: 'Bugs and outages', sales: 'New purchases' } },
  sentiment: { type: 'score', instructions: 'How does the customer feel?', criteria: ['angry', 'unhappy', 'neutral', 'pleased', 'delighted'] },
};

/** State editor, questions as JSON, and the answers. Inputs survive errors. */
export function DecisionPanel({ client }: { client: JevClient }) {
  const [state, setState] = useState('My invoice was charged twice this month and I need a refund today.');
  const [questions, setQuestions] = useState(JSON.stringify(EXAMPLE_QUESTIONS, null, 2));
  const [result, setResult] = useState<DecisionResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(e: Event) {
    e.preventDefault();
    setError(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(questions);
    } catch (err) {
      setError(`The questions are not valid JSON: ${(err as Error).message}`);
      return;
    }
    setBusy(true);
    try {
      setResult(await client.decisions.create({ model: 'jev', state, questions: parsed }));
    } catch (err) {
      const param = (err as { error?: { param?: string | null } }).error?.param;
      setError(`${(err as Error).message}${param ? ` (field: ${param})` : ''}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="decide-h" class="panel">
      <h2 id="decide-h">Decision</h2>
      <form onSubmit={run}>
        <label>
          State
          <textarea data-testid="state" rows={4} value={state} onInput={(e) => setState(e.currentTarget.value)} />
        </label>
        <label>
          Questions (JSON)
          <textarea data-testid="questions" rows={12} class="mono" value={questions} onInput={(e) => setQuestions(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy} data-testid="decide">
          {busy ? 'Deciding…' : 'Decide'}
        </button>
      </form>
      {error && (
        <p role="alert" class="error" data-testid="decision-error">
          {error}
        </p>
      )}
      {result && <pre data-testid="decision-result" class="mono">{JSON.stringify(result, null, 2)}</pre>}
    </section>
  );
}
