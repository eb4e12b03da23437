/** How the playground names one pass of an evaluation (calibrate off / on, a profile on held-out items). */
import type { EvaluationMode } from '../../evaluation/types.ts';
import { formatCoverage } from '../shared/format.ts';

export function modeLabel(mode: EvaluationMode): string {
  const parts = [`calibrate ${mode.calibrate ? 'on' : 'off'}`];
  if (mode.profile !== null) parts.push(`profile ${mode.profile}`);
  if (mode.alpha !== null) parts.push(`${formatCoverage(mode.alpha)} sets`);
  if (mode.held_out) parts.push('held-out items');
  return parts.join(', ');
}
