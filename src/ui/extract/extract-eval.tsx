import { useRef, useState } from 'preact/hooks';
import {
  DatasetError,
  extractionReliabilitySvg,
  parseExtractionSet,
  runExtractionEvaluation,
  type ExtractionItem,
  type ExtractionMetrics,
  type ExtractionReport,
  type ExtractFn,
} from '../../evaluation/index.ts';
import { DownloadButton } from '../shared/download-button.tsx';
import { isAbort } from '../state/error-info.ts';

const f = (x: number | null) => (x === null ? '–' : x.toFixed(3));

function MetricsTable({ rows, head, testId }: { rows: readonly ExtractionMetrics[]; head: string; testId: string }) {
  return (
    <table class="metrics-table" data-testid={testId}>
      <thead>
        <tr>
          {[head, 'items', 'exact match', 'refused', 'pNull Brier', 'pNull AUROC', 'guess right', 'confidence ECE', 'span exact', 'span IoU'].map((h) => (
            <th key={h} scope="col">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((m) => (
          <tr key={m.key} data-key={m.key}>
            <th scope="row">{m.key}</th>
            <td>{m.items}</td>
            <td data-metric="exact_match">{f(m.exact_match)}</td>
            <td>{m.refusals}</td>
            <td data-metric="null_brier">{f(m.null_brier)}</td>
            <td data-metric="null_auroc">{f(m.null_auroc)}</td>
            <td>{f(m.guess_accuracy)}</td>
            <td data-metric="confidence_ece">{f(m.confidence_ece)}</td>
            <td>{f(m.span_exact)}</td>
            <td>{f(m.span_iou)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * "Evaluate a labelled set" under the Extract form: a labelled extraction JSONL (docs/evaluation.md,
 * "Extraction sets") read in the page, every item sent through the client's `extractions.create`,
 * the metrics by field type and by field, the reliability of confidence; nothing leaves the page.
 */
export function ExtractEval({ extract }: { extract: ExtractFn }) {
  const [items, setItems] = useState<{ name: string; items: ExtractionItem[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [progress, setProgress] = useState<{ done: number; total: number } | null>(null);
  const [report, setReport] = useState<ExtractionReport | null>(null);
  const controller = useRef<AbortController | null>(null);

  const load = async (file: File | undefined) => {
    if (!file) return;
    setReport(null);
    try {
      setItems({ name: file.name, items: parseExtractionSet(await file.text()) });
      setError(null);
    } catch (e) {
      setItems(null);
      setError(e instanceof DatasetError ? `${file.name}: ${e.message}` : String(e));
    }
  };

  const run = async () => {
    if (!items) return;
    const abort = new AbortController();
    controller.current = abort;
    setError(null);
    setProgress({ done: 0, total: items.items.length });
    try {
      const out = await runExtractionEvaluation({ items: items.items, dataName: items.name, extract, signal: abort.signal, onProgress: setProgress });
      setReport(out.report);
    } catch (e) {
      setError(isAbort(e) || abort.signal.aborted ? 'Cancelled.' : String(e));
    } finally {
      controller.current = null;
      setProgress(null);
    }
  };

  return (
    <section class="panel stack" aria-labelledby="extract-eval-h" data-testid="extract-eval">
      <h2 id="extract-eval-h">Evaluate a labelled set</h2>
      <p class="muted small-text">
        A JSONL file, one item a line: state, fields, expected values (null where absent), optional labelled spans. Read and run in this page.
      </p>
      <div class="field">
        <label for="extract-eval-file">Labelled extraction set (.jsonl)</label>
        <input id="extract-eval-file" type="file" accept=".jsonl,.ndjson,application/x-ndjson" onChange={(e) => void load(e.currentTarget.files?.[0])} />
      </div>
      {items && (
        <p class="small-text" data-testid="extract-eval-loaded">
          {items.name}: {items.items.length} items, {Object.keys(items.items[0]?.types ?? {}).length} fields each.
        </p>
      )}
      {error && (
        <p class="form-error" role="alert" data-testid="extract-eval-error">
          {error}
        </p>
      )}
      <div class="row">
        <button type="button" class="button primary" disabled={!items || progress !== null} onClick={() => void run()}>
          {progress ? `Evaluating… ${progress.done} / ${progress.total}` : 'Evaluate'}
        </button>
        {progress && (
          <button type="button" class="button" onClick={() => controller.current?.abort()}>
            Cancel
          </button>
        )}
      </div>
      {report && (
        <div class="stack" data-testid="extract-eval-report">
          <p class="small-text">
            {report.data.items} items on {report.model}
            {report.errors.length > 0 ? `; ${report.errors.length} failed (first: ${report.errors[0]!.message})` : ''}.
          </p>
          <h3>By field type</h3>
          <MetricsTable rows={report.by_type} head="type" testId="extract-eval-by-type" />
          <h3>By field</h3>
          <MetricsTable rows={report.by_field} head="field" testId="extract-eval-by-field" />
          <h3>Reliability of confidence</h3>
          <div class="row">
            {report.by_type
              .filter((m) => m.guess_accuracy !== null)
              .map((m) => (
                <img key={m.key} alt={`Reliability of ${m.key} confidence, ECE ${f(m.confidence_ece)}`} src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(extractionReliabilitySvg(m))}`} />
              ))}
          </div>
          <DownloadButton fileName="extraction-report.json" type="application/json" text={() => `${JSON.stringify(report, null, 2)}\n`} label="Download report.json" />
        </div>
      )}
    </section>
  );
}
