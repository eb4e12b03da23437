/**
 * What fitting a calibration profile did: per question, the fit (a temperature, or Platt's a and b
 * for noul) and the expected calibration error and log loss before and after on the held-out items,
 * which the fit never saw. "Save profile" keeps it in this browser, to apply in the decision form.
 */
import { useState } from 'preact/hooks';
import type { CalibrationProfile, QuestionProfile } from '../../contract/index.ts';
import { DownloadButton } from '../shared/download-button.tsx';
import { errorInfo } from '../state/error-info.ts';
import type { SavedProfiles } from '../state/saved-profiles.ts';

function fitText(q: QuestionProfile): string {
  switch (q.fit.method) {
    case 'identity':
      return 'none (identity)';
    case 'temperature':
      return `temperature ${q.fit.temperature.toFixed(3)}`;
    case 'platt':
      return `Platt a ${q.fit.a.toFixed(3)}, b ${q.fit.b.toFixed(3)}`;
    default: {
      const never: never = q.fit;
      return String(never);
    }
  }
}

export function EvalFit({ profile, store }: { profile: CalibrationProfile; store: SavedProfiles }) {
  const [saved, setSaved] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const save = () => {
    try {
      const p = store.save(profile);
      setSaved(p.id);
      setError(null);
    } catch (e) {
      setError(errorInfo(e).message);
    }
  };
  const questions = Object.entries(profile.questions);
  return (
    <section class="eval-fit" aria-labelledby="eval-fit-h" data-testid="eval-fit">
      <h4 id="eval-fit-h">
        Fitted profile <span class="mono">{profile.id}</span>
      </h4>
      <div class="table-scroll">
        <table class="metrics">
          <thead>
            <tr>
              <th scope="col">Question</th>
              <th scope="col">Fit</th>
              <th scope="col">Fit items</th>
              <th scope="col">Held-out items</th>
              <th scope="col">ECE before → after</th>
              <th scope="col">Log loss before → after</th>
            </tr>
          </thead>
          <tbody>
            {questions.map(([fingerprint, q]) => (
              <tr key={fingerprint} data-testid="fit-row" data-key={q.key}>
                <th scope="row" class="mono" title={fingerprint}>
                  {q.key}
                </th>
                <td>{fitText(q)}</td>
                <td>{q.fit_items}</td>
                <td>{q.holdout?.items ?? 0}</td>
                <td data-testid="ece-before-after" data-before={q.holdout ? String(q.holdout.ece_before) : ''} data-after={q.holdout ? String(q.holdout.ece_after) : ''}>
                  {q.holdout ? `${q.holdout.ece_before.toFixed(4)} → ${q.holdout.ece_after.toFixed(4)}` : '–'}
                </td>
                <td>{q.holdout ? `${q.holdout.log_loss_before.toFixed(4)} → ${q.holdout.log_loss_after.toFixed(4)}` : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="row">
        <button type="button" class="button primary small" onClick={save}>
          Save profile
        </button>
        <DownloadButton fileName={`${profile.id}.json`} type="application/json" text={() => JSON.stringify(profile, null, 2)} />
        <span role="status" class="muted small-text">
          {saved && `Saved as ${saved}: choose it under "Apply profile" in the decision form.`}
        </span>
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
