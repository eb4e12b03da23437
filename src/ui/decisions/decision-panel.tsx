import { useRef, useState } from 'preact/hooks';
import type { JevClient } from '../../facade/jev-client.ts';
import { CodeSnippets } from '../shared/code-snippets.tsx';
import { FieldError } from '../shared/field-error.tsx';
import { formatMs } from '../shared/format.ts';
import { parseAlpha } from '../shared/parse-alpha.ts';
import { RunBar } from '../shared/run-bar.tsx';
import { decisionSnippets } from '../shared/snippets.ts';
import type { DecisionDraft } from '../state/decision-draft.ts';
import { errorInfo, isAbort } from '../state/error-info.ts';
import type { DecisionPreset } from '../state/presets.ts';
import { fromQuestions, toQuestions, type QuestionDraft } from '../state/question-draft.ts';
import type { SavedProfiles } from '../state/saved-profiles.ts';
import { fromProblems, noErrors, placeError, type DecisionErrors } from './decision-errors.ts';
import { DecisionResults, type DecisionRun } from './decision-results.tsx';
import { PresetBar } from './preset-bar.tsx';
import { ProfilePicker } from './profile-picker.tsx';
import { QuestionList } from './question-list.tsx';

interface Props {
  client: JevClient;
  draft: DecisionDraft;
  profiles: SavedProfiles;
}

/** Scrolls the first shown error into view, once the page has drawn it. */
function revealFirstError() {
  requestAnimationFrame(() => document.querySelector('#decide-panel .field-error, #decide-panel .form-error')?.scrollIntoView({ block: 'center' }));
}

/** The decision builder: the state, the questions, and what the model answers. */
export function DecisionPanel({ client, draft, profiles }: Props) {
  const state = draft.state.value;
  const drafts = draft.questions.value;
  const calibrate = draft.calibrate.value;
  // A stored choice of a profile deleted since counts as none.
  const profile = profiles.profiles.value.some((p) => p.id === draft.profile.value) ? draft.profile.value : '';
  const alpha = parseAlpha(draft.alpha.value);
  const [errors, setErrors] = useState<DecisionErrors>(noErrors);
  const [run, setRun] = useState<DecisionRun | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [undo, setUndo] = useState<{ label: string; state: string; questions: QuestionDraft[] } | null>(null);
  const controller = useRef<AbortController | null>(null);

  // What the snippets show: the request as a caller would write it.
  const request = (() => {
    const { questions } = toQuestions(drafts);
    return {
      model: 'jev',
      state,
      questions,
      ...(calibrate ? { calibrate: true } : {}),
      ...(profile ? { calibration: profile } : {}),
      ...(profile && 'alpha' in alpha && alpha.alpha !== null ? { prediction_set: { alpha: alpha.alpha } } : {}),
    };
  })();

  const pickPreset = (p: DecisionPreset) => {
    setUndo({ label: `${p.label} loaded.`, state, questions: drafts });
    draft.state.value = p.state;
    draft.questions.value = fromQuestions(p.questions);
    setErrors(noErrors);
  };
  const undoPreset = () => {
    if (!undo) return;
    draft.state.value = undo.state;
    draft.questions.value = undo.questions;
    setUndo(null);
  };

  async function decide(e?: Event) {
    e?.preventDefault();
    if (busy) return;
    setNotice(null);
    const { problems } = toQuestions(drafts);
    if (problems.length > 0) {
      setErrors(fromProblems(problems));
      revealFirstError();
      return;
    }
    if (profile && 'error' in alpha) {
      revealFirstError();
      return;
    }
    setErrors(noErrors);
    setBusy(true);
    const abort = new AbortController();
    controller.current = abort;
    // The playground also asks for the answer mass, to explain the confidence it shows, and for
    // the prompt each question was read as, shown collapsed on its answer card.
    const sent = { ...request, include: ['answer_mass' as const, 'prompt' as const] };
    const started = performance.now();
    try {
      const response = await client.decisions.create(sent, { signal: abort.signal });
      const latencyMs = performance.now() - started;
      setRun({ request: sent, response, latencyMs });
      const n = Object.keys(response.answers).length;
      setNotice(`${n} answer${n === 1 ? '' : 's'} in ${formatMs(latencyMs)}.`);
    } catch (err) {
      if (isAbort(err)) setNotice('Cancelled.');
      else {
        setErrors(placeError(errorInfo(err), drafts));
        revealFirstError();
      }
    } finally {
      controller.current = null;
      setBusy(false);
    }
  }

  const onStateKey = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void decide(e);
  };

  return (
    <div class="decide" id="decide-panel">
      <form class="panel stack" onSubmit={decide} noValidate aria-labelledby="decide-h">
        <h2 id="decide-h">Decision</h2>
        <p class="muted small-text">Ask typed questions about a text; every answer comes back as probabilities.</p>
        <PresetBar onPick={pickPreset} onUndo={undo ? undoPreset : null} undoLabel={undo?.label ?? null} />
        <div class="field">
          <label for="state-input">State: the text to judge</label>
          <textarea
            id="state-input"
            rows={4}
            value={state}
            aria-invalid={errors.state ? true : undefined}
            aria-describedby={errors.state ? 'state-error' : 'state-hint'}
            onInput={(e) => (draft.state.value = e.currentTarget.value)}
            onKeyDown={onStateKey}
          />
          <p id="state-hint" class="hint">
            {state.length.toLocaleString('en')} characters · Ctrl+Enter to decide
          </p>
          <FieldError id="state-error" message={errors.state} />
        </div>
        <fieldset class="questions-fieldset">
          <legend>Questions</legend>
          <QuestionList drafts={drafts} errors={errors} onChange={(next) => (draft.questions.value = next)} />
        </fieldset>
        <label class="check">
          <input type="checkbox" checked={calibrate} onChange={(e) => (draft.calibrate.value = e.currentTarget.checked)} />
          Calibrate: divide out the model's bias towards some answers (slower)
        </label>
        <ProfilePicker
          store={profiles}
          profile={profile}
          alpha={draft.alpha.value}
          onProfile={(id) => (draft.profile.value = id)}
          onAlpha={(a) => (draft.alpha.value = a)}
          profileError={errors.profile}
          alphaError={errors.alpha}
        />
        <RunBar
          error={errors.form}
          errorTestId="decision-error"
          busy={busy}
          empty={drafts.length === 0}
          labels={['Decide', 'Deciding…']}
          busyNote="The model is reading the state…"
          notice={notice}
          onCancel={() => controller.current?.abort()}
        />
        <CodeSnippets
          snippets={decisionSnippets(location.origin, request)}
          note="Sent to this page's origin, where the service worker answers: run fetch in this tab's console; curl needs a server that answers the same path."
        />
      </form>
      {run && (
        <div class="panel">
          <DecisionResults run={run} />
        </div>
      )}
    </div>
  );
}
