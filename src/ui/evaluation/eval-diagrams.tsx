/** A question's reliability diagram per pass, and its confusion matrices folded away below. */
import { confusionSvg, reliabilitySvg } from '../../evaluation/svg.ts';
import type { EvaluationReport } from '../../evaluation/types.ts';
import { modeLabel } from './eval-mode-label.ts';
import { SvgImage } from './svg-image.tsx';

export function EvalDiagrams({ report, questionKey }: { report: EvaluationReport; questionKey: string }) {
  const passes = report.modes.flatMap((mode, i) => {
    const metrics = mode.questions.find((q) => q.key === questionKey);
    return metrics ? [{ i, label: modeLabel(mode), metrics }] : [];
  });
  return (
    <>
      <div class="diagrams">
        {passes.map(({ i, label, metrics }) => (
          <figure key={i}>
            <SvgImage svg={reliabilitySvg(metrics)} alt={`Reliability diagram of ${questionKey}, ${label}`} testId="reliability-diagram" />
            <figcaption>{label}</figcaption>
          </figure>
        ))}
      </div>
      <details>
        <summary>Confusion matrices</summary>
        <div class="diagrams">
          {passes.map(({ i, label, metrics }) => (
            <figure key={i}>
              <SvgImage svg={confusionSvg(metrics)} alt={`Confusion matrix of ${questionKey}, ${label}`} testId="confusion-matrix" />
              <figcaption>{label}</figcaption>
            </figure>
          ))}
        </div>
      </details>
    </>
  );
}
