import type { QuestionType } from '../../contract/index.ts';
import { newId } from './new-id.ts';
import { isRecord, isString } from './stored-signal.ts';

/** One row of a choice question: an option key and what it means. */
export interface OptionRow {
  id: string;
  key: string;
  description: string;
}

/** One grade of a score question; its position is its score. */
export interface GradeRow {
  id: string;
  label: string;
}

/**
 * A question as the builder edits it. It keeps the criteria of all three types, so switching
 * the type back and forth loses nothing typed.
 */
export interface QuestionDraft {
  id: string;
  key: string;
  type: QuestionType;
  instructions: string;
  noul: { true: string; false: string };
  options: OptionRow[];
  grades: GradeRow[];
}

/** A fault the builder finds before sending (the engine checks the rest). */
export interface DraftProblem {
  draftId: string;
  field: 'key' | 'criteria';
  message: string;
}

export function option(key = '', description = ''): OptionRow {
  return { id: newId(), key, description };
}

export function grade(label = ''): GradeRow {
  return { id: newId(), label };
}

export function emptyDraft(type: QuestionType, key: string): QuestionDraft {
  return {
    id: newId(),
    key,
    type,
    instructions: '',
    noul: { true: '', false: '' },
    options: [option(), option()],
    grades: [grade(), grade(), grade()],
  };
}

/** A key not yet used by any question: `base`, `base_2`, `base_3`, … */
export function freshKey(drafts: readonly QuestionDraft[], base: string): string {
  const used = new Set(drafts.map((d) => d.key));
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) if (!used.has(`${base}_${n}`)) return `${base}_${n}`;
}

/** The request's `questions` object, and what stops it from being sent. */
export function toQuestions(drafts: readonly QuestionDraft[]): { questions: Record<string, unknown>; problems: DraftProblem[] } {
  const questions: Record<string, unknown> = {};
  const problems: DraftProblem[] = [];
  const seen = new Set<string>();
  for (const d of drafts) {
    const key = d.key.trim();
    if (key === '') problems.push({ draftId: d.id, field: 'key', message: 'Give this question a key: the answer comes back under it.' });
    else if (seen.has(key)) problems.push({ draftId: d.id, field: 'key', message: `Another question already uses the key "${key}"; keys must differ.` });
    seen.add(key);
    const criteria = criteriaOf(d, problems);
    questions[key] = { type: d.type, instructions: d.instructions, criteria };
  }
  return { questions, problems };
}

function criteriaOf(d: QuestionDraft, problems: DraftProblem[]): unknown {
  switch (d.type) {
    case 'noul':
      return { true: d.noul.true, false: d.noul.false };
    case 'choice': {
      const criteria: Record<string, string> = {};
      for (const row of d.options) {
        const key = row.key.trim();
        if (Object.hasOwn(criteria, key)) {
          problems.push({ draftId: d.id, field: 'criteria', message: `Two options share the key "${key}"; option keys must differ.` });
        }
        criteria[key] = row.description;
      }
      return criteria;
    }
    case 'score':
      return d.grades.map((g) => g.label);
    default: {
      const never: never = d.type;
      return never;
    }
  }
}

/** Builder drafts from a request's `questions` (a preset, or a stored request). */
export function fromQuestions(questions: Record<string, unknown>): QuestionDraft[] {
  return Object.entries(questions).map(([key, raw]) => {
    const q = isRecord(raw) ? raw : {};
    const type: QuestionType = q['type'] === 'noul' || q['type'] === 'score' ? q['type'] : 'choice';
    const draft = emptyDraft(type, key);
    draft.instructions = isString(q['instructions']) ? q['instructions'] : '';
    const c = q['criteria'];
    if (type === 'noul' && isRecord(c)) draft.noul = { true: text(c['true']), false: text(c['false']) };
    if (type === 'choice' && isRecord(c)) draft.options = Object.entries(c).map(([k, v]) => option(k, text(v)));
    if (type === 'score' && Array.isArray(c)) draft.grades = c.map((label) => grade(text(label)));
    return draft;
  });
}

const text = (x: unknown): string => (typeof x === 'string' ? x : '');

/** Whether stored data has the shape of a list of drafts (it may come from an older page). */
export function isDraftList(x: unknown): x is QuestionDraft[] {
  return (
    Array.isArray(x) &&
    x.every(
      (d) =>
        isRecord(d) &&
        isString(d['id']) &&
        isString(d['key']) &&
        (d['type'] === 'noul' || d['type'] === 'choice' || d['type'] === 'score') &&
        isString(d['instructions']) &&
        isRecord(d['noul']) &&
        Array.isArray(d['options']) &&
        Array.isArray(d['grades']),
    )
  );
}
