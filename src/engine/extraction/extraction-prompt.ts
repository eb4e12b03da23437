/**
 * How a field is asked. The state comes first in the decision's own frame (decision-prompt.ts:
 * the same system prompt and `State:` block), so an extraction and a decision on the same document
 * share the state's cached prefix; each field's block follows, then the frame's tail, then the
 * answer: the value's text, or `null` where the state does not give it.
 */
import type { ExtractionField } from '../../contract/index.ts';

/** The answer that says the state does not give the field. */
export const NULL_ANSWER = 'null';

function typeLine(field: ExtractionField): string {
  const places = (f: { integer: boolean; decimals: number }) =>
    f.integer || f.decimals === 0 ? 'a whole number' : `a number with at most ${f.decimals} decimal place${f.decimals === 1 ? '' : 's'}`;
  switch (field.type) {
    case 'text':
      return 'Type: text, copied exactly as it is written in the state.';
    case 'number':
      return `Type: ${places(field)}${field.unit ? `, in ${field.unit}` : ''}, written with digits and a point for decimals (no separators, no unit).`;
    case 'date':
      return 'Type: a date, written YYYY-MM-DD.';
    case 'time':
      return 'Type: a time of day, written HH:MM or HH:MM:SS (24-hour clock).';
    case 'datetime':
      return 'Type: a date and time in ISO 8601, YYYY-MM-DDTHH:MM or YYYY-MM-DDTHH:MM:SS, followed by Z or the offset (+HH:MM) where the state gives one.';
    case 'duration':
      return `Type: a length of time in ${field.unit}, ${places(field)} (not negative).`;
    case 'list': {
      const item =
        field.items === 'text' ? 'strings copied exactly from the state' : field.items === 'date' ? 'dates written "YYYY-MM-DD"' : `${places(field)}s`;
      return `Type: a JSON array of ${item}, such as ${field.items === 'number' ? '[1, 2]' : field.items === 'date' ? '["2024-01-31"]' : '["a", "b"]'}.`;
    }
    default: {
      const never: never = field;
      throw new Error(`unknown field type ${(never as { type: string }).type}`);
    }
  }
}

/** A field's block: what to extract, its type, the reference date, and how to say it is absent. */
export function fieldBlock(key: string, field: ExtractionField, referenceDate: string | null): string {
  const lines = [`Extract the field "${key}" from the state.`];
  if (field.instructions.trim() !== '') lines.push(`Field: ${field.instructions.trim()}`);
  lines.push(typeLine(field));
  if (referenceDate) lines.push(`Today is ${referenceDate}: read relative dates and dates without a year against it.`);
  lines.push(`Answer with the value only, or ${NULL_ANSWER} if the state does not give it.`);
  return lines.join('\n');
}
