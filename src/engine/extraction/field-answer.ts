/**
 * A decoded field as the response writes it (extraction-response.ts): the value converted to its
 * type, `value` null where `pNull` ≥ 0.5, `guess` always, and the source where the value's text is
 * found in the state; a list's items each with their confidence (the product of the renormalised
 * probabilities of the tokens that write any of the item's bytes) and source.
 */
import type { ExtractionAnswer, ExtractionField, ExtractionSource, ListItemAnswer, StatePartText } from '../../contract/index.ts';
import type { DecodedField } from './decode-field.ts';
import { dateForms, findText, numberForms, sourceOf } from './value-source.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });

const withSource = (s: ExtractionSource | null) => (s ? { source: s } : {});

export function fieldAnswer(field: ExtractionField, d: DecodedField, parts: readonly StatePartText[]): ExtractionAnswer {
  if (d.valueIds === null) return { type: 'refusal' };
  let text: string;
  try {
    text = decoder.decode(d.bytes);
  } catch {
    return { type: 'refusal' };
  }
  const absent = d.pNull >= 0.5;
  const common = { pNull: d.pNull, confidence: d.confidence };
  switch (field.type) {
    case 'text':
      return { type: 'text', value: absent ? null : text, guess: text, ...common, ...withSource(findText(parts, text)) };
    case 'number':
    case 'duration': {
      const n = Number(text);
      return { type: field.type, value: absent ? null : n, guess: n, ...common, ...withSource(sourceOf(parts, numberForms(text), true)) };
    }
    case 'date':
      return { type: 'date', value: absent ? null : text, guess: text, ...common, ...withSource(sourceOf(parts, dateForms(text), true)) };
    case 'time':
    case 'datetime':
      return { type: field.type, value: absent ? null : text, guess: text, ...common, ...withSource(sourceOf(parts, [text], true)) };
    case 'list': {
      const items = JSON.parse(text) as (string | number)[];
      const spans = itemSpans(d.bytes);
      const itemAnswers: ListItemAnswer[] = items.map((item, i) => {
        const span = spans[i]!;
        const forms = field.items === 'text' ? [String(item)] : field.items === 'date' ? dateForms(String(item)) : numberForms(itemText(d.bytes, span));
        const source = field.items === 'text' ? findText(parts, String(item)) : sourceOf(parts, forms, true);
        return { confidence: spanConfidence(d, span), ...withSource(source) };
      });
      const guess = (field.items === 'number' ? items.map(Number) : items.map(String)) as string[] | number[];
      // `items` describe `value`'s entries: absent where the value is null (the AI SDK checks one per entry).
      return absent ? { type: 'list', value: null, guess, ...common } : { type: 'list', value: guess, guess, ...common, items: itemAnswers };
    }
  }
}

/** Each item's byte span in a list's bytes (quotes included for quoted items). */
function itemSpans(bytes: Uint8Array): [number, number][] {
  const spans: [number, number][] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === 0x22) {
      const end = bytes.indexOf(0x22, i + 1);
      spans.push([i, end + 1]);
      i = end;
    } else if (b === 0x2d || (b >= 0x30 && b <= 0x39)) {
      let end = i;
      while (end < bytes.length && (bytes[end] === 0x2d || bytes[end] === 0x2e || (bytes[end]! >= 0x30 && bytes[end]! <= 0x39))) end++;
      spans.push([i, end]);
      i = end - 1;
    }
  }
  return spans;
}

function itemText(bytes: Uint8Array, [a, b]: [number, number]): string {
  return decoder.decode(bytes.subarray(a, b));
}

/** The product of the renormalised probabilities of the value tokens that write any byte of `span`. */
function spanConfidence(d: DecodedField, [a, b]: [number, number]): number {
  let confidence = 1;
  let at = -d.bytesBefore;
  d.tokenLengths.forEach((n, i) => {
    if (at < b && at + n > a) confidence *= d.tokenProbs[i]!;
    at += n;
  });
  return confidence;
}
