/**
 * A field of the Extract tab's builder as a person edits it (every option kept as typed, so that
 * switching a field's type and back loses nothing), and the request's `fields` built from the
 * drafts: what the page can refuse itself (no key, two fields with one key, decimals that are not
 * a whole number from 0 to 6) is a problem named beside the field before any call.
 */
import { durationUnits, fieldTypes, listItemTypes, maxDecimals, type DurationUnit, type FieldType, type ListItemType } from '../../contract/extraction-request.ts';
import { newId } from '../state/new-id.ts';
import { isRecord } from '../state/stored-signal.ts';

export interface FieldDraft {
  id: string;
  key: string;
  type: FieldType;
  instructions: string;
  /** number: any unit the prompt names (e.g. "EUR"); duration: one of `durationUnits`. */
  unit: string;
  /** As typed: '' for the default (6 places, 0 when `integer`). */
  decimals: string;
  integer: boolean;
  /** list: what each item is. */
  items: ListItemType;
}

export type FieldPart = 'key' | 'type' | 'instructions' | 'unit' | 'decimals' | 'items';
export interface FieldProblem {
  draftId: string;
  field: FieldPart;
  message: string;
}

export const FIELD_TYPE_LABELS: Record<FieldType, string> = {
  text: 'Text (copied from the state)',
  number: 'Number',
  date: 'Date',
  time: 'Time',
  datetime: 'Date and time',
  duration: 'Duration',
  list: 'List',
};

/** Which options a type reads. */
export const hasUnit = (t: FieldType): boolean => t === 'number' || t === 'duration';
export const hasNumberFormat = (t: FieldType, items: ListItemType): boolean => t === 'number' || t === 'duration' || (t === 'list' && items === 'number');

export function newFieldDraft(type: FieldType = 'text', key = ''): FieldDraft {
  return { id: newId(), key, type, instructions: '', unit: type === 'duration' ? 'minutes' : '', decimals: '', integer: false, items: 'text' };
}

/** The request's `fields` for the drafts, and what the page refuses before sending. */
export function toFields(drafts: readonly FieldDraft[]): { fields: Record<string, unknown>; problems: FieldProblem[] } {
  const fields: Record<string, unknown> = {};
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const d of drafts) {
    const key = d.key.trim();
    if (key === '') problems.push({ draftId: d.id, field: 'key', message: 'Give this field a key: its value comes back under it.' });
    else if (seen.has(key)) problems.push({ draftId: d.id, field: 'key', message: `Another field already uses the key "${key}"; keys must differ.` });
    seen.add(key);
    const field: Record<string, unknown> = { type: d.type };
    if (d.instructions.trim() !== '') field['instructions'] = d.instructions;
    if (d.type === 'number' && d.unit.trim() !== '') field['unit'] = d.unit.trim();
    if (d.type === 'duration') field['unit'] = d.unit;
    if (d.type === 'list') field['items'] = d.items;
    if (hasNumberFormat(d.type, d.items)) {
      if (d.integer) field['integer'] = true;
      const typed = d.decimals.trim();
      if (typed !== '' && !d.integer) {
        const n = Number(typed);
        if (!/^\d+$/.test(typed) || n > maxDecimals) {
          problems.push({ draftId: d.id, field: 'decimals', message: `Decimals must be a whole number from 0 to ${maxDecimals}; "${typed}" is not.` });
        } else field['decimals'] = n;
      }
    }
    fields[key] = field;
  }
  return { fields, problems };
}

const isFieldType = (x: unknown): x is FieldType => typeof x === 'string' && (fieldTypes as readonly string[]).includes(x);
const isItems = (x: unknown): x is ListItemType => typeof x === 'string' && (listItemTypes as readonly string[]).includes(x);
export const isDurationUnit = (x: unknown): x is DurationUnit => typeof x === 'string' && (durationUnits as readonly string[]).includes(x);

/** Builder drafts from a request's `fields` (a preset, or a line of a labelled set). */
export function fromFields(fields: Record<string, unknown>): FieldDraft[] {
  return Object.entries(fields).map(([key, raw]) => {
    const f = isRecord(raw) ? raw : {};
    const type = isFieldType(f['type']) ? f['type'] : 'text';
    const draft = newFieldDraft(type, key);
    if (typeof f['instructions'] === 'string') draft.instructions = f['instructions'];
    if (typeof f['unit'] === 'string') draft.unit = f['unit'];
    if (typeof f['decimals'] === 'number') draft.decimals = String(f['decimals']);
    if (f['integer'] === true) draft.integer = true;
    if (isItems(f['items'])) draft.items = f['items'];
    return draft;
  });
}

/** Whether a stored value is a list of drafts this page can edit (an older shape is refused). */
export function isFieldDraftList(x: unknown): x is FieldDraft[] {
  return (
    Array.isArray(x) &&
    x.every(
      (d) =>
        isRecord(d) &&
        typeof d['id'] === 'string' &&
        typeof d['key'] === 'string' &&
        isFieldType(d['type']) &&
        typeof d['instructions'] === 'string' &&
        typeof d['unit'] === 'string' &&
        typeof d['decimals'] === 'string' &&
        typeof d['integer'] === 'boolean' &&
        isItems(d['items']),
    )
  );
}
