/**
 * An answer's split-conformal prediction set (`prediction_set`), in words: "90% set: {billing,
 * account}". The set covers the expected answer with probability at least 1 − α, on items like
 * the profile's held-out ones (docs/evaluation.md).
 */
import type { Answer } from '../../contract/index.ts';
import { formatCoverage } from '../shared/format.ts';

function labelOf(answer: Answer, member: string): string {
  if (answer.type === 'score') {
    const grade = answer.legend[member];
    return grade === undefined ? member : `${member} · ${grade}`;
  }
  return member;
}

export function PredictionSet({ answer, alpha }: { answer: Answer; alpha: number | null }) {
  const set = answer.prediction_set;
  if (!set) return null;
  const coverage = alpha === null ? 'Prediction' : formatCoverage(alpha);
  return (
    <p
      class="prediction-set"
      data-testid="prediction-set"
      data-members={JSON.stringify(set)}
      title="The smallest set of answers that covers the truth with probability at least 1 − α, calibrated on the profile's held-out labelled items (assuming this text is like them)"
    >
      {coverage} set: {'{'}
      {set.map((m) => labelOf(answer, m)).join(', ')}
      {'}'}
    </p>
  );
}
