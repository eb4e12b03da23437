/**
 * Each field type's byte machine (byte-automaton.ts), the bound on its bytes, and the copy
 * automaton of the state's text parts that `text` values and text list items walk.
 */
import type { ExtractionField, StatePartText } from '../../contract/index.ts';
import type { ByteAutomaton } from './byte-automaton.ts';
import { copyAutomaton, suffixAutomaton, type SuffixAutomaton } from './copy-automaton.ts';
import { listAutomaton, MAX_ITEMS } from './list-automaton.ts';
import { dateAutomaton, dateTimeAutomaton, numberAutomaton, timeAutomaton } from './value-grammars.ts';

/** The most bytes a `text` value copies (the character under way at the bound may finish). */
export const TEXT_MAX_BYTES = 200;
/** The most bytes a text item of a list copies. */
export const ITEM_MAX_BYTES = 48;

const encoder = new TextEncoder();

/** The suffix automaton of the text parts (JSON parts are not copied from), once per request. */
export function partsAutomaton(parts: readonly StatePartText[]): SuffixAutomaton {
  return suffixAutomaton(parts.map((p) => (p.type === 'text' ? encoder.encode(p.text) : new Uint8Array(0))));
}

/** Bytes a JSON string would have to escape: a list's text items leave them out. */
const escaped = (b: number) => b === 0x22 || b === 0x5c || b < 0x20;

export function fieldMachine(field: ExtractionField, sam: () => SuffixAutomaton): ByteAutomaton<unknown> {
  switch (field.type) {
    case 'text':
      return copyAutomaton(sam(), { maxBytes: TEXT_MAX_BYTES, exclude: (b) => b < 0x20 && b !== 0x09 }) as ByteAutomaton<unknown>;
    case 'number':
      return numberAutomaton({ decimals: field.decimals, signed: true }) as ByteAutomaton<unknown>;
    case 'duration':
      return numberAutomaton({ decimals: field.decimals, signed: false }) as ByteAutomaton<unknown>;
    case 'date':
      return dateAutomaton as ByteAutomaton<unknown>;
    case 'time':
      return timeAutomaton as ByteAutomaton<unknown>;
    case 'datetime':
      return dateTimeAutomaton as ByteAutomaton<unknown>;
    case 'list':
      if (field.items === 'text') return listAutomaton(copyAutomaton(sam(), { maxBytes: ITEM_MAX_BYTES, exclude: escaped }), true) as ByteAutomaton<unknown>;
      if (field.items === 'date') return listAutomaton(dateAutomaton, true) as ByteAutomaton<unknown>;
      return listAutomaton(numberAutomaton({ decimals: field.decimals, signed: true }), false) as ByteAutomaton<unknown>;
    default: {
      const never: never = field;
      throw new Error(`unknown field type ${(never as { type: string }).type}`);
    }
  }
}

/** The most bytes a value of the field may take (every machine is bounded): a decode's step bound. */
export function maxValueBytes(field: ExtractionField): number {
  switch (field.type) {
    case 'text':
      return TEXT_MAX_BYTES + 3;
    case 'number':
    case 'duration':
      return 1 + 15 + 1 + field.decimals;
    case 'date':
      return 10;
    case 'time':
      return 8;
    case 'datetime':
      return 25;
    case 'list': {
      const item = field.items === 'text' ? ITEM_MAX_BYTES + 5 : field.items === 'date' ? 12 : 1 + 15 + 1 + field.decimals;
      return 2 + MAX_ITEMS * (item + 2);
    }
  }
}
