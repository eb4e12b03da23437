/**
 * The evaluation section of the Decisions tab (issue 17, item 3): drop a labelled set, run it
 * through this tab's engine with calibrate off and on side by side, and read per question the
 * metrics, the reliability diagram and the items it got wrong. Optionally fit a calibration profile
 * on the calibrate-off answers, check it on held-out items, and save it for the decision form.
 * Nothing leaves the page.
 */
import { useState } from 'preact/hooks';
import { profileIdSchema, type QuestionInput } from '../../contract/index.ts';
import type { EvaluationProgress } from '../../evaluation/types.ts';
import type { JevClient } from '../../facade/jev-client.ts';
import { parseAlpha } from '../shared/parse-alpha.ts';
import { TextField } from '../shared/text-field.tsx';
import type { DecisionDraft } from '../state/decision-draft.ts';
import { toQuestions } from '../state/question-draft.ts';
import type { SavedProfiles } from '../state/saved-profiles.ts';
import { EvalDrop } from './eval-drop.tsx';
import { EvalResults } from './eval-results.tsx';
import { describeProblem, useEvaluation, type EvalProblem } from './eval-run.ts';

interface Props {
  client: JevClient;
  draft: DecisionDraft;
  profiles: SavedProfiles;
}

function ProblemLine({ problem }: { problem: EvalProblem }) {
  return (
    <p class="form-error" role="alert" data-testid="eval-error" data-line={problem.line ?? ''} data-field={problem.field ?? ''}>
      {describeProblem(problem)}
    </p>
  );
}

/** Requests done of all the run sends; before the first answer, a bar without a value (still going). */
function Progress({ progress }: { progress: EvaluationProgress | null }) {
  const label = progress ? `Pass ${Math.min(progress.mode + 1, progress.modes)} of ${progress.modes}` : 'Sending the first item';
  return (
    <div class="progress eval-progress" data-testid="eval-progress">
      <div class="progress-label">
        <span>{label}</span>
        <span data-testid="eval-progress-count">{progress ? `${progress.done} of ${progress.total}` : ''}</span>
      </div>
      {progress ? (
        <progress max={Math.max(1, progress.total)} value={progress.done} aria-label={`${label}: ${progress.done} of ${progress.total} requests`} />
      ) : (
        <progress aria-label={label} />
      )}
    </div>
  );
}

export function EvalPanel({ client, draft, profiles }: Props) {
  const { status, load, run, stop } = useEvaluation(client);
  const [fit, setFit] = useState(false);
  const [profileId, setProfileId] = useState('my-profile');
  const [alphaText, setAlphaText] = useState('');
  const running = status.phase === 'running';

  const idCheck = profileIdSchema.safeParse(profileId.trim());
  const idError = fit && !idCheck.success ? (idCheck.error.issues[0]?.message ?? 'not a profile id') : null;
  const alpha = parseAlpha(alphaText);
  const alphaError = fit && 'error' in alpha ? alpha.error : null;

  const onFile = (file: File) => {
    // A CSV holds states and answers only: its questions are the ones in the decision form.
    const { questions } = toQuestions(draft.questions.value);
    void load(file, questions as Record<string, QuestionInput>);
  };

  const start = () => {
    if (status.phase !== 'ready' && status.phase !== 'done' && status.phase !== 'stopped' && status.phase !== 'failed') return;
    if (idError || alphaError) return;
    void run(status.set, { fit: fit ? { id: profileId.trim(), alpha: 'alpha' in alpha ? alpha.alpha : null } : null });
  };

  const set = 'set' in status ? status.set : null;
  return (
    <section class="panel stack eval" aria-labelledby="eval-h" data-testid="eval-panel" data-phase={status.phase}>
      <h2 id="eval-h">Evaluate on a labelled set</h2>
      <p class="muted small-text">
        How often is the model right on your data, and can you trust its 0.8? Every item is sent to the engine in this tab, with Calibrate off and on; the
        file never leaves the page.
      </p>
      <EvalDrop onFile={onFile} disabled={running} />
      {status.phase === 'invalid' && <ProblemLine problem={status.problem} />}
      {set && (
        <p class="small-text" data-testid="eval-set">
          <span class="file-name">{set.fileName}</span>: {set.items.length} item{set.items.length === 1 ? '' : 's'}
        </p>
      )}
      <div class="eval-options">
        <label class="check">
          <input type="checkbox" checked={fit} onChange={(e) => setFit(e.currentTarget.checked)} disabled={running} aria-describedby="fit-hint" />
          Fit a calibration profile on half the items, checked on the other half
        </label>
        <p id="fit-hint" class="hint">
          Per question, a temperature (Platt scaling for true/false) that minimises the log loss of the calibrate-off answers; the held-out half is then
          sent again with the profile applied.
        </p>
        {fit && (
          <div class="field-row">
            <TextField id="fit-id" label="Profile name" class="mono" value={profileId} disabled={running} onInput={setProfileId} error={idError} />
            <TextField
              id="fit-alpha"
              label="Prediction set α on the held-out items"
              inputMode="decimal"
              placeholder="optional, e.g. 0.1"
              value={alphaText}
              disabled={running}
              onInput={setAlphaText}
              error={alphaError}
            />
          </div>
        )}
      </div>
      <div class="row">
        <button type="button" class="button primary" onClick={start} disabled={!set || running || idError !== null || alphaError !== null}>
          {running ? 'Evaluating…' : 'Run evaluation'}
        </button>
        {running && (
          <button type="button" class="button" onClick={stop}>
            Stop
          </button>
        )}
        <span role="status" class="muted small-text" data-testid="eval-status">
          {status.phase === 'running' && 'Running in this tab; the form above keeps working.'}
          {status.phase === 'stopped' && `Stopped${status.progress ? ` after ${status.progress.done} of ${status.progress.total} requests` : ''}.`}
          {status.phase === 'done' && `Done: ${status.report.modes.length} passes over ${status.set.items.length} items.`}
        </span>
      </div>
      {status.phase === 'running' && (
        <Progress progress={status.progress} />
      )}
      {status.phase === 'failed' && <ProblemLine problem={status.problem} />}
      {status.phase === 'done' && <EvalResults report={status.report} profiles={profiles} />}
    </section>
  );
}
