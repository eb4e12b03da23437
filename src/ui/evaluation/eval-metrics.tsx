/**
 * An evaluation's metrics, per question: one row per metric, one column per pass (calibrate off
 * and on side by side, and the fitted profile on the held-out items when there is one). The exact
 * value of every cell is in its `data-value`; the text rounds it. Definitions: docs/evaluation.md.
 */
import type { EvaluationReport, QuestionMetrics } from '../../evaluation/types.ts';
import { formatPercent, formatShare } from '../shared/format.ts';
import { modeLabel } from './eval-mode-label.ts';

interface MetricRow {
  id: string;
  label: string;
  /** What it measures, for a tooltip. */
  title: string;
  value(m: QuestionMetrics): number | null;
  format(x: number): string;
}

const fixed = (digits: number) => (x: number) => x.toFixed(digits);

const ROWS: readonly MetricRow[] = [
  { id: 'items', label: 'Items', title: 'Labelled items of this question', value: (m) => m.items, format: String },
  { id: 'accuracy', label: 'Accuracy', title: 'Share of items whose most probable answer is the expected one', value: (m) => m.accuracy, format: formatPercent },
  { id: 'macro_f1', label: 'Macro-F1', title: 'Unweighted mean over answers of the per-answer F1', value: (m) => m.macro_f1, format: fixed(3) },
  { id: 'mae', label: 'MAE', title: 'Mean |expected grade − answer score| (the score is Σ index · p)', value: (m) => m.mae, format: fixed(3) },
  { id: 'spearman', label: 'Spearman ρ', title: "Spearman's rank correlation of expected grades and answer scores", value: (m) => m.spearman, format: fixed(3) },
  { id: 'brier', label: 'Brier', title: 'Mean over items of Σ (p − y)² over all answers (0 best, 2 worst)', value: (m) => m.brier, format: fixed(4) },
  { id: 'log_loss', label: 'Log loss', title: 'Mean over items of −ln p(expected)', value: (m) => m.log_loss, format: fixed(4) },
  { id: 'ece', label: 'ECE', title: 'Expected calibration error: Σ (bin share) · |accuracy − confidence| over 10 bins of the top probability', value: (m) => m.ece, format: fixed(4) },
  { id: 'mean_answer_mass', label: 'Mean answer mass', title: "Mean share of the model's next-token probability on the allowed answers", value: (m) => m.mean_answer_mass, format: formatShare },
  { id: 'coverage', label: 'Set coverage', title: 'Share of items whose prediction set holds the expected answer', value: (m) => m.prediction_sets?.coverage ?? null, format: formatPercent },
  { id: 'mean_size', label: 'Mean set size', title: 'Mean number of answers in a prediction set', value: (m) => m.prediction_sets?.mean_size ?? null, format: fixed(2) },
];

/** The question keys of a report, in the order the first pass lists them. */
export function reportQuestionKeys(report: EvaluationReport): string[] {
  const keys: string[] = [];
  for (const mode of report.modes) for (const q of mode.questions) if (!keys.includes(q.key)) keys.push(q.key);
  return keys;
}

export function EvalMetrics({ report, questionKey }: { report: EvaluationReport; questionKey: string }) {
  const columns = report.modes.map((mode) => mode.questions.find((q) => q.key === questionKey) ?? null);
  // A row shows when some pass has a value for it (MAE only for score, set coverage only with sets…).
  const rows = ROWS.filter((row) => columns.some((m) => m !== null && row.value(m) !== null));
  return (
    <table class="metrics" data-testid="eval-metrics" data-key={questionKey}>
      <caption class="visually-hidden">Metrics of {questionKey}, per pass</caption>
      <thead>
        <tr>
          <th scope="col">Metric</th>
          {report.modes.map((mode, i) => (
            <th key={i} scope="col" data-mode={i}>
              {modeLabel(mode)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.id}>
            <th scope="row" title={row.title}>
              {row.label}
            </th>
            {columns.map((m, i) => {
              const v = m === null ? null : row.value(m);
              return (
                <td key={i} data-testid="metric" data-metric={row.id} data-mode={i} data-value={v === null ? '' : String(v)}>
                  {v === null ? '–' : row.format(v)}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
