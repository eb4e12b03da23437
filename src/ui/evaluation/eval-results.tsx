/**
 * A finished evaluation: downloads (report.json, report.md, made in the page), then per question
 * the metrics of every pass side by side and the reliability diagrams, the fitted profile when
 * there is one, and the items each pass got wrong.
 */
import { reportMarkdown } from '../../evaluation/report-markdown.ts';
import type { EvaluationReport } from '../../evaluation/types.ts';
import { DownloadButton } from '../shared/download-button.tsx';
import { formatMs } from '../shared/format.ts';
import type { SavedProfiles } from '../state/saved-profiles.ts';
import { EvalDiagrams } from './eval-diagrams.tsx';
import { EvalFit } from './eval-fit.tsx';
import { EvalMetrics, reportQuestionKeys } from './eval-metrics.tsx';
import { EvalWrong } from './eval-wrong.tsx';

export function EvalResults({ report, profiles }: { report: EvaluationReport; profiles: SavedProfiles }) {
  const keys = reportQuestionKeys(report);
  return (
    <div class="eval-results" data-testid="eval-results">
      <p class="muted small-text">
        Model <span class="mono">{report.model}</span> on {report.device} · median latency {formatMs(report.modes[0]?.latency_ms.median ?? NaN)} per item
      </p>
      <div class="row">
        <DownloadButton fileName="report.json" type="application/json" text={() => JSON.stringify(report, null, 2)} />
        <DownloadButton fileName="report.md" type="text/markdown" text={() => reportMarkdown(report)} />
      </div>
      {keys.map((key) => (
        <section key={key} class="eval-question" aria-label={`Question ${key}`} data-testid="eval-question" data-key={key}>
          <h3 class="mono">{key}</h3>
          <div class="table-scroll">
            <EvalMetrics report={report} questionKey={key} />
          </div>
          <EvalDiagrams report={report} questionKey={key} />
        </section>
      ))}
      {report.fit && <EvalFit profile={report.fit.profile} store={profiles} />}
      {report.modes.map((mode, i) => (
        <EvalWrong key={i} mode={mode} index={i} />
      ))}
    </div>
  );
}
