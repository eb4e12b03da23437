/**
 * The one rule for when a question is answered with a refusal (OpenAI's Decisions shape, the AI
 * SDK provider): the label mass, the share of the model's next-token probability that fell on the
 * question's allowed answers before renormalising over them (`answer_mass`), is below a floor.
 * A tiny mass means the model did not mean to answer with any label, and the renormalised
 * probabilities are noise. The floor comes from `createClient({ refuseBelowLabelMass })` or a
 * calibration profile's `refuse_below_label_mass`; 0 (the default) never refuses. The Jev shape
 * never refuses: it carries the mass (`include: ["answer_mass"]`) and keeps its answer.
 */
import './zod-config.ts';
import { z } from 'zod';

/** A floor on the label mass: a number in [0, 1]; 0 never refuses. */
export const labelMassFloorSchema = z.number().min(0).max(1);

/** Whether a question whose answers got `labelMass` of the model's probability is refused under `floor`. */
export function refusesAnswer(labelMass: number, floor: number): boolean {
  return floor > 0 && !(labelMass >= floor);
}
