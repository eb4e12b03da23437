/**
 * An expected answer as a data set writes it, checked against its question and written in one
 * canonical form, so that an item's labels mean one thing whatever file they came from:
 * - noul: a boolean. `true`/`false`, or the strings "true"/"false" (any case: CSV cells).
 * - choice: an option key (string). A JSON number is read as the key it spells (`1` → "1").
 * - score: a grade index (integer, 0 = the first grade label). A number must be an integer in
 *   range; a string is a grade label when it is one (exactly), else an integer index ("2").
 * Anything else is a DatasetError naming the line and the field.
 */
import type { Question } from '../contract/index.ts';
import { DatasetError } from './dataset-error.ts';
import type { Expected } from './types.ts';

export function expectedLabel(question: Question, value: unknown, line: number, field: string): Expected {
  const fail = (message: string): never => {
    throw new DatasetError(message, line, field);
  };
  switch (question.type) {
    case 'noul': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
      return fail(`a noul question's label is true or false, not ${shown(value)}`);
    }
    case 'choice': {
      const keys = Object.keys(question.criteria);
      const key = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
      if (key === null) return fail(`a choice question's label is one of its option keys (${list(keys)}), not ${shown(value)}`);
      if (!keys.includes(key)) return fail(`${shown(value)} is not an option of this question; its options are ${list(keys)}`);
      return key;
    }
    case 'score': {
      const grades = question.criteria;
      const range = `an integer from 0 to ${grades.length - 1} or one of its grade labels (${list(grades)})`;
      if (typeof value === 'number') {
        if (Number.isInteger(value) && value >= 0 && value < grades.length) return value;
        return fail(`a score question's label is ${range}, not ${shown(value)}`);
      }
      if (typeof value === 'string') {
        const byLabel = grades.indexOf(value);
        if (byLabel >= 0) return byLabel;
        const text = value.trim();
        if (/^\d+$/.test(text) && Number(text) < grades.length) return Number(text);
        return fail(`a score question's label is ${range}, not ${shown(value)}`);
      }
      return fail(`a score question's label is ${range}, not ${shown(value)}`);
    }
    default: {
      const never: never = question;
      throw new Error(`unknown question type ${(never as { type: string }).type}`);
    }
  }
}

function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

function list(values: readonly string[]): string {
  const quoted = values.slice(0, 12).map((v) => JSON.stringify(v));
  return values.length > 12 ? `${quoted.join(', ')}, … (${values.length} in all)` : quoted.join(', ');
}
