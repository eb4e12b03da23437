/**
 * Where a value's text is found in the state (`source`: a text part and UTF-16 offsets, end
 * exclusive). A copied text is found by construction; a number, date or time where one of its
 * surface forms occurs in a text part with no digit touching it on either side; null where none does.
 */
import type { ExtractionSource, StatePartText } from '../../contract/index.ts';

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The first occurrence of `text` in a text part, in part order. */
export function findText(parts: readonly StatePartText[], text: string, digitBounded = false): ExtractionSource | null {
  if (text === '') return null;
  for (let part = 0; part < parts.length; part++) {
    const p = parts[part]!;
    if (p.type !== 'text') continue;
    let at = p.text.indexOf(text);
    while (at >= 0) {
      const end = at + text.length;
      if (!digitBounded || (!/[0-9]/.test(p.text[at - 1] ?? '') && !/[0-9]/.test(p.text[end] ?? ''))) return { type: 'text', part, start: at, end };
      at = p.text.indexOf(text, at + 1);
    }
  }
  return null;
}

/** A number as it was decoded, then grouped by thousands (1,234.5). */
export function numberForms(written: string): string[] {
  const forms = [written];
  const [int, frac] = written.replace(/^-/, '').split('.');
  if (int && int.length > 3) {
    const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    forms.push(`${written.startsWith('-') ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`);
  }
  return forms;
}

/** A YYYY-MM-DD date as written, and as "March 5, 2024", "5 March 2024", "Mar 5, 2024". */
export function dateForms(iso: string): string[] {
  const [y, m, d] = iso.split('-');
  const month = MONTHS[Number(m) - 1];
  if (!y || !month || !d) return [iso];
  const day = String(Number(d));
  return [iso, `${month} ${day}, ${y}`, `${day} ${month} ${y}`, `${month.slice(0, 3)} ${day}, ${y}`];
}

export function sourceOf(parts: readonly StatePartText[], forms: readonly string[], digitBounded: boolean): ExtractionSource | null {
  for (const form of forms) {
    const found = findText(parts, form, digitBounded);
    if (found) return found;
  }
  return null;
}
