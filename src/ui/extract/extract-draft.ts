import type { Signal } from '@preact/signals';
import { isCalendarDate } from '../../contract/extraction-request.ts';
import { isString, storedSignal } from '../state/stored-signal.ts';
import { EXTRACT_PRESETS } from './extract-presets.ts';
import { fromFields, isFieldDraftList, type FieldDraft } from './field-draft.ts';

/** What the Extract tab's builder holds, kept in localStorage across reloads (state/stored-signal.ts). */
export interface ExtractDraft {
  state: Signal<string>;
  fields: Signal<FieldDraft[]>;
  /** YYYY-MM-DD as typed, or '' for none. */
  referenceDate: Signal<string>;
}

export function createExtractDraft(): ExtractDraft {
  const first = EXTRACT_PRESETS[0]!;
  return {
    state: storedSignal('extract.state', first.state, isString),
    fields: storedSignal('extract.fields', fromFields(first.fields), isFieldDraftList),
    referenceDate: storedSignal('extract.referenceDate', first.referenceDate, isString),
  };
}

/** The reference date as the request carries it, or the problem with what was typed. */
export function parseReferenceDate(typed: string): { value: string | null } | { error: string } {
  const s = typed.trim();
  if (s === '') return { value: null };
  return isCalendarDate(s) ? { value: s } : { error: `The reference date must be a real calendar date written YYYY-MM-DD; "${s}" is not.` };
}
