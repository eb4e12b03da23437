/**
 * A calibration profile: what a labelled set taught about one model's answers to given questions.
 * Our extension (docs/evaluation.md). It is plain JSON, keyed by the model version that produced
 * the answers (`DecisionResponse.model`) and by a fingerprint of each question, so it applies to
 * exactly the model and the questions it was fitted on.
 *
 * Per question it holds:
 * - `fit`: the map from the engine's probabilities to calibrated ones. `temperature` (choice and
 *   score): p'ᵢ ∝ pᵢ^(1/T). `platt` (noul): p'(true) = σ(a · logit p(true) + b). `identity`.
 * - `conformal`: the nonconformity scores 1 − p'(expected answer) of held-out labelled items,
 *   ascending, for split-conformal prediction sets (see src/engine/decision/calibration.ts).
 * - `holdout`: what the fit did on the held-out items (reported, not used).
 */
import './zod-config.ts';
import { z } from 'zod';
import { canonical } from './canonical.ts';
import type { Question } from './question.ts';
import { labelMassFloorSchema } from './refusal.ts';

export const questionFitSchema = z.discriminatedUnion('method', [
  z.object({ method: z.literal('identity') }),
  z.object({ method: z.literal('temperature'), temperature: z.number().positive().finite() }),
  z.object({ method: z.literal('platt'), a: z.number().finite(), b: z.number().finite() }),
]);
export type QuestionFit = z.infer<typeof questionFitSchema>;

export const holdoutReportSchema = z.object({
  items: z.int().min(0),
  ece_before: z.number().min(0),
  ece_after: z.number().min(0),
  log_loss_before: z.number().min(0),
  log_loss_after: z.number().min(0),
});
export type HoldoutReport = z.infer<typeof holdoutReportSchema>;

export const questionProfileSchema = z.object({
  /** The question's key in the set it was fitted on (for people; lookups use the fingerprint). */
  key: z.string(),
  type: z.enum(['noul', 'choice', 'score']),
  /** The answers in the engine's order: noul `true`, `false`; choice option keys; score grade indices. */
  answers: z.array(z.string()).min(2),
  fit: questionFitSchema,
  conformal: z.object({ scores: z.array(z.number().min(0).max(1)) }).nullable(),
  fit_items: z.int().min(0),
  holdout: holdoutReportSchema.nullable(),
});
export type QuestionProfile = z.infer<typeof questionProfileSchema>;

export const profileIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:-]+$/, 'a profile id is 1 to 128 letters, digits, ".", "_", ":" or "-"');

export const calibrationProfileSchema = z.object({
  object: z.literal('calibration_profile'),
  id: profileIdSchema,
  /** The model version the answers came from (`DecisionResponse.model`). */
  model: z.string().min(1),
  /** Whether the answers were computed with contextual calibration (`calibrate`). */
  calibrate: z.boolean(),
  created: z.string(),
  /** Question fingerprint (questionFingerprint) → what was learned about it. */
  questions: z.record(z.string(), questionProfileSchema),
  /**
   * Optional: the label-mass floor below which a question asked with this profile is answered with
   * a refusal in OpenAI's and the AI SDK's shapes (refusal.ts); it overrides the client's
   * `refuseBelowLabelMass`. The Jev shape keeps its answers.
   */
  refuse_below_label_mass: labelMassFloorSchema.optional(),
});
export type CalibrationProfile = z.infer<typeof calibrationProfileSchema>;

/**
 * A stable fingerprint of a normalized question: its type, instructions and criteria (option
 * order ignored), hashed. Two requests that ask the same question get the same fingerprint.
 */
export function questionFingerprint(question: Question): string {
  return `q_${fnv1a64(JSON.stringify(canonical(question)))}`;
}

/** FNV-1a, 64 bits, over the UTF-16 code units; 16 hex digits. */
function fnv1a64(text: string): string {
  let h = 0xcbf29ce484222325n;
  const prime = 0x100000001b3n;
  const mask = 0xffffffffffffffffn;
  for (let i = 0; i < text.length; i++) {
    h ^= BigInt(text.charCodeAt(i));
    h = (h * prime) & mask;
  }
  return h.toString(16).padStart(16, '0');
}
