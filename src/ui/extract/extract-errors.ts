import { parseParam } from '../shared/parse-param.ts';
import type { ErrorInfo } from '../state/error-info.ts';
import type { FieldDraft, FieldPart, FieldProblem } from './field-draft.ts';

/** Where each error of an extraction shows: beside the state, the reference date, inside a field, or on the form. */
export interface ExtractErrors {
  state?: string | undefined;
  referenceDate?: string | undefined;
  form?: string | undefined;
  /** By draft id, then by the part of the field. */
  fields: Record<string, Partial<Record<FieldPart | 'other', string>>>;
}

export const noExtractErrors: ExtractErrors = { fields: {} };

export function fromFieldProblems(problems: readonly FieldProblem[]): ExtractErrors {
  const fields: ExtractErrors['fields'] = {};
  for (const p of problems) fields[p.draftId] = { ...fields[p.draftId], [p.field]: p.message };
  return { fields };
}

const PARTS: readonly string[] = ['type', 'instructions', 'unit', 'decimals', 'items', 'integer'];

/** Places a refusal by its `param`: `fields.total.decimals` → that field's decimals; `state`, `referenceDate`. */
export function placeExtractError(info: ErrorInfo, drafts: readonly FieldDraft[]): ExtractErrors {
  const path = parseParam(info.param);
  const message = info.message;
  if (path[0] === 'state') return { state: message, fields: {} };
  if (path[0] === 'referenceDate') return { referenceDate: message, fields: {} };
  if (path[0] === 'fields' && typeof path[1] === 'string') {
    const draft = drafts.find((d) => d.key.trim() === path[1]);
    if (draft) {
      const part = path[2];
      const where = typeof part === 'string' && PARTS.includes(part) ? (part === 'integer' ? 'decimals' : (part as FieldPart)) : 'other';
      return { fields: { [draft.id]: { [where]: message } } };
    }
  }
  return { form: message, fields: {} };
}
