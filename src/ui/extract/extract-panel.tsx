import { useRef, useState } from 'preact/hooks';
import type { ExtractionRequestInput } from '../../contract/extraction-request.ts';
import type { JevClient } from '../../facade/jev-client.ts';
import type { ExtractFn } from '../../evaluation/index.ts';
import { CodeSnippets } from '../shared/code-snippets.tsx';
import { extractionSnippets } from '../shared/extraction-snippets.ts';
import { FieldError } from '../shared/field-error.tsx';
import { formatMs } from '../shared/format.ts';
import { RunBar } from '../shared/run-bar.tsx';
import { errorInfo, isAbort } from '../state/error-info.ts';
import { ExtractEval } from './extract-eval.tsx';
import { parseReferenceDate, type ExtractDraft } from './extract-draft.ts';
import { fromFieldProblems, noExtractErrors, placeExtractError, type ExtractErrors } from './extract-errors.ts';
import { EXTRACT_PRESETS, type ExtractPreset } from './extract-presets.ts';
import { ExtractionResults, type ExtractionRun } from './extraction-results.tsx';
import { FieldEditor } from './field-editor.tsx';
import { fromFields, newFieldDraft, toFields, type FieldDraft } from './field-draft.ts';

interface Props {
  client: JevClient;
  draft: ExtractDraft;
}

function revealFirstError() {
  requestAnimationFrame(() => document.querySelector('#extract-panel .field-error, #extract-panel .form-error')?.scrollIntoView({ block: 'center' }));
}

/** The Extract tab: a state, the fields to pull out of it, and what the model found, marked in the state. */
export function ExtractPanel({ client, draft }: Props) {
  const state = draft.state.value;
  const drafts = draft.fields.value;
  const referenceDate = parseReferenceDate(draft.referenceDate.value);
  const [errors, setErrors] = useState<ExtractErrors>(noExtractErrors);
  const [run, setRun] = useState<ExtractionRun | null>(null);
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [undo, setUndo] = useState<{ label: string; state: string; fields: FieldDraft[]; referenceDate: string } | null>(null);
  const controller = useRef<AbortController | null>(null);
  const extract: ExtractFn = (request, options) => client.extractions.create(request, options);

  // What the snippets show and the call sends: the request as a caller would write it.
  const request: ExtractionRequestInput = {
    model: 'jev',
    state,
    fields: toFields(drafts).fields as ExtractionRequestInput['fields'],
    ...('value' in referenceDate && referenceDate.value !== null ? { referenceDate: referenceDate.value } : {}),
  };

  const pickPreset = (p: ExtractPreset) => {
    setUndo({ label: `${p.label} loaded.`, state, fields: drafts, referenceDate: draft.referenceDate.value });
    draft.state.value = p.state;
    draft.fields.value = fromFields(p.fields);
    draft.referenceDate.value = p.referenceDate;
    setErrors(noExtractErrors);
  };
  const undoPreset = () => {
    if (!undo) return;
    draft.state.value = undo.state;
    draft.fields.value = undo.fields;
    draft.referenceDate.value = undo.referenceDate;
    setUndo(null);
  };
  const setField = (i: number, next: FieldDraft) => (draft.fields.value = drafts.map((d, j) => (j === i ? next : d)));
  const removeField = (i: number) => (draft.fields.value = drafts.filter((_, j) => j !== i));

  async function submit(e?: Event) {
    e?.preventDefault();
    if (busy) return;
    setNotice(null);
    const { problems } = toFields(drafts);
    const shown: ExtractErrors = { ...fromFieldProblems(problems), ...('error' in referenceDate ? { referenceDate: referenceDate.error } : {}) };
    if (problems.length > 0 || 'error' in referenceDate) {
      setErrors(shown);
      revealFirstError();
      return;
    }
    setErrors(noExtractErrors);
    setBusy(true);
    const abort = new AbortController();
    controller.current = abort;
    const started = performance.now();
    try {
      const response = await extract(request, { signal: abort.signal });
      const latencyMs = performance.now() - started;
      setRun({ request, parts: [state], response, latencyMs });
      const n = Object.keys(response.answers).length;
      setNotice(`${n} field${n === 1 ? '' : 's'} in ${formatMs(latencyMs)}.`);
    } catch (err) {
      if (isAbort(err)) setNotice('Cancelled.');
      else {
        setErrors(placeExtractError(errorInfo(err), drafts));
        revealFirstError();
      }
    } finally {
      controller.current = null;
      setBusy(false);
    }
  }

  return (
    <div class="decide" id="extract-panel">
      <form class="panel stack" onSubmit={submit} noValidate aria-labelledby="extract-h">
        <h2 id="extract-h">Extraction</h2>
        <p class="muted small-text">
          Pull typed values out of a text: each with the probability that it is absent, a confidence, and where in the text it came from.
        </p>
        <div class="preset-bar">
          <div class="chips" role="group" aria-label="Extraction presets">
            <span class="chips-label">Presets</span>
            {EXTRACT_PRESETS.map((p) => (
              <button type="button" class="chip" key={p.id} onClick={() => pickPreset(p)}>
                {p.label}
              </button>
            ))}
          </div>
          <p class="small-text" role="status">
            {undo && (
              <>
                {undo.label}{' '}
                <button type="button" class="link-button" onClick={undoPreset}>
                  Undo
                </button>
              </>
            )}
          </p>
        </div>
        <div class="field">
          <label for="extract-state">State: the text to read</label>
          <textarea
            id="extract-state"
            rows={6}
            value={state}
            aria-invalid={errors.state ? true : undefined}
            aria-describedby={errors.state ? 'extract-state-error' : 'extract-state-hint'}
            onInput={(e) => (draft.state.value = e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e);
            }}
          />
          <p id="extract-state-hint" class="hint">
            {state.length.toLocaleString('en')} characters · Ctrl+Enter to extract
          </p>
          <FieldError id="extract-state-error" message={errors.state} />
        </div>
        <div class="field">
          <label for="extract-reference-date">Reference date (anchors "next Thursday" and dates without a year)</label>
          <input
            id="extract-reference-date"
            type="text"
            class="mono"
            placeholder="YYYY-MM-DD (optional)"
            value={draft.referenceDate.value}
            aria-invalid={errors.referenceDate ? true : undefined}
            aria-describedby={errors.referenceDate ? 'extract-reference-date-error' : undefined}
            onInput={(e) => (draft.referenceDate.value = e.currentTarget.value)}
          />
          <FieldError id="extract-reference-date-error" message={errors.referenceDate} />
        </div>
        <fieldset class="questions-fieldset">
          <legend>Fields</legend>
          <div class="stack">
            {drafts.map((d, i) => (
              <FieldEditor key={d.id} draft={d} index={i} errors={errors.fields[d.id] ?? {}} onChange={(next) => setField(i, next)} onRemove={() => removeField(i)} />
            ))}
          </div>
          <button type="button" class="button" onClick={() => (draft.fields.value = [...drafts, newFieldDraft()])}>
            + Add a field
          </button>
        </fieldset>
        <RunBar
          error={errors.form}
          errorTestId="extract-error"
          busy={busy}
          empty={drafts.length === 0}
          labels={['Extract', 'Extracting…']}
          busyNote="The model is reading the state…"
          notice={notice}
          onCancel={() => controller.current?.abort()}
        />
        <CodeSnippets
          snippets={extractionSnippets(location.origin, request)}
          note="fetch goes to this page's origin, where the service worker answers; client.extractions and experimental_extract call the engine in this tab."
        />
      </form>
      {run && (
        <div class="panel">
          <ExtractionResults run={run} />
        </div>
      )}
      <ExtractEval extract={extract} />
    </div>
  );
}
