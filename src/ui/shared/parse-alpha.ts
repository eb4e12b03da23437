/**
 * Reads the prediction set's alpha field (the decision form's, which the evaluation reads too):
 * null when empty, a number in (0, 1), or a message saying what is wrong.
 */
export function parseAlpha(text: string): { alpha: number | null } | { error: string } {
  const t = text.trim();
  if (t === '') return { alpha: null };
  const alpha = Number(t);
  if (!Number.isFinite(alpha) || alpha <= 0 || alpha >= 1) return { error: 'Alpha is a number between 0 and 1 (exclusive), such as 0.1 for a 90% set.' };
  return { alpha };
}
