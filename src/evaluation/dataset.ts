/**
 * Labelled data sets, read from text (eval/README.md, docs/evaluation.md). Pure: the CLI and the
 * playground both parse with these functions.
 *
 * JSONL: one JSON object per non-blank line, a decision request plus `labels` and an optional `id`:
 *
 *     {"id":"t1","state":"…","questions":{"urgent":{"type":"noul"}},"labels":{"urgent":true}}
 *
 * `model` may be omitted (it defaults to "jev"); the request is validated by the contract's own
 * parser, and its error's `param` becomes the field `request.<param>`. The run, not the line,
 * chooses a calibration profile: a line with `calibration` or `prediction_set` is refused.
 *
 * CSV: a header row, then one item per row. Column `state` (required) is the state text, `id`
 * (optional) the item's id, and every other column is a question key of the `questions` given
 * alongside, holding the expected answer; an empty cell leaves that question unlabelled. An item's
 * `line` is its row, counted from 1 below the header.
 *
 * Labels are checked against their question and written canonically (dataset-label.ts). Every
 * problem is a DatasetError naming the line and the field.
 */
import Papa from 'papaparse';
import { JevError, formatParam, parseDecisionRequest } from '../contract/index.ts';
import type { DecisionRequest, DecisionRequestInput, QuestionInput } from '../contract/index.ts';
import { DatasetError } from './dataset-error.ts';
import { expectedLabel } from './dataset-label.ts';
import type { EvalItem, Expected } from './types.ts';

/** Most items one data set may hold. */
export const maxItems = 100_000;

/** Fields of a JSONL line that the run, not the line, decides. */
const runFields = ['calibration', 'prediction_set'] as const;

/** Reads a data set by its file name's extension: `.jsonl` (or `.ndjson`) or `.csv` (which needs `questions`). */
export function parseDataset(fileName: string, text: string, questions?: Record<string, QuestionInput>): EvalItem[] {
  const extension = /\.([^./\\]+)$/.exec(fileName)?.[1]?.toLowerCase() ?? '';
  if (extension === 'jsonl' || extension === 'ndjson') return parseJsonl(text);
  if (extension === 'csv') {
    if (!questions) {
      throw new DatasetError(`${fileName}: a CSV set holds only states and answers; give its questions too (a JSON object of question key → question)`, null, 'questions');
    }
    return parseCsv(text, questions);
  }
  throw new DatasetError(`${fileName}: unknown data-set format${extension ? ` ".${extension}"` : ''}; a set is a .jsonl or a .csv file`, null, null);
}

/** Reads a JSONL data set: one labelled decision request per non-blank line. */
export function parseJsonl(text: string): EvalItem[] {
  const items: EvalItem[] = [];
  const lines = stripBom(text).split(/\r?\n/);
  checkCount(lines.map((raw, i) => (raw.trim() === '' ? 0 : i + 1)));
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '') continue;
    const line = i + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new DatasetError(`not valid JSON (${(e as Error).message})`, line, null);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new DatasetError(`a line is a JSON object (a decision request plus "labels"), not ${Array.isArray(value) ? 'an array' : JSON.stringify(value)}`, line, null);
    }
    items.push(jsonlItem(value as Record<string, unknown>, line));
  }
  if (items.length === 0) throw new DatasetError('the data set has no items', null, null);
  return items;
}

function jsonlItem(object: Record<string, unknown>, line: number): EvalItem {
  const { labels, id, ...rest } = object;
  for (const field of runFields) {
    if (Object.hasOwn(rest, field) && rest[field] !== null && rest[field] !== undefined) {
      throw new DatasetError(`a data line does not choose a calibration profile; the run does (npm run eval -- --profile FILE, or the playground)`, line, `request.${field}`);
    }
  }
  const { model, ...fields } = rest;
  const input = { model: model ?? 'jev', ...fields } as DecisionRequestInput;
  const request = validRequest(input, line);
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    throw new DatasetError(`an item's id is a string or a number, not ${JSON.stringify(id)}`, line, 'id');
  }
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    throw new DatasetError(
      labels === undefined ? 'a line needs "labels": { questionKey: expected answer }' : `"labels" is an object of question key → expected answer, not ${JSON.stringify(labels)}`,
      line,
      'labels',
    );
  }
  const checked: Record<string, Expected> = {};
  for (const [key, value] of Object.entries(labels)) {
    const field = formatParam(['labels', key])!;
    const question = Object.hasOwn(request.questions, key) ? request.questions[key] : undefined;
    if (!question) throw new DatasetError(`no question "${key}" is asked on this line (it asks ${keysOf(request)})`, line, field);
    checked[key] = expectedLabel(question, value, line, field);
  }
  if (Object.keys(checked).length === 0) throw new DatasetError('no labels: an item needs at least one expected answer', line, 'labels');
  return { line, id: id === undefined || id === null ? null : String(id), request: input, labels: checked };
}

/**
 * Reads a CSV data set: a `state` column, an optional `id` column, and one column per question
 * key of `questions` holding the expected answer (an empty cell: unlabelled).
 */
export function parseCsv(text: string, questions: Record<string, QuestionInput>): EvalItem[] {
  // The questions first, on their own (line null): the contract's parser names the field, and a
  // stand-in state keeps the questions the only thing checked.
  validRequest({ model: 'jev', state: 'x', questions } as DecisionRequestInput, null, (param) => param ?? 'questions');
  const result = Papa.parse<string[]>(stripBom(text), { header: false, skipEmptyLines: false, delimiter: ',' });
  const fatal = result.errors.find((e) => e.type !== 'Delimiter');
  if (fatal) throw new DatasetError(`not valid CSV: ${fatal.message}`, fatal.row === undefined ? null : Math.max(fatal.row, 0), null);
  const [header, ...rows] = result.data;
  if (!header || header.every((cell) => cell.trim() === '')) throw new DatasetError('the CSV has no header row (state, id, then one column per question key)', null, 'header');
  const columns = header.map((cell) => cell.trim());
  const seen = new Set<string>();
  for (const column of columns) {
    if (seen.has(column)) throw new DatasetError(`the header row names column "${column}" twice`, null, column);
    seen.add(column);
    if (column === 'state' || column === 'id') continue;
    if (column === '') throw new DatasetError('the header row has an empty column name', null, 'header');
    if (!Object.hasOwn(questions, column)) {
      throw new DatasetError(`the header row's column "${column}" is not a question key (the questions are ${Object.keys(questions).map((k) => `"${k}"`).join(', ')})`, null, column);
    }
  }
  if (!seen.has('state')) throw new DatasetError('the header row has no "state" column', null, 'state');
  const items: EvalItem[] = [];
  checkCount(rows.map((cells, r) => (cells.every((cell) => cell.trim() === '') ? 0 : r + 1)));
  for (let r = 0; r < rows.length; r++) {
    const cells = rows[r]!;
    const row = r + 1;
    if (cells.every((cell) => cell.trim() === '')) continue;
    if (cells.length !== columns.length) {
      throw new DatasetError(`the row has ${cells.length} fields; the header has ${columns.length}`, row, null);
    }
    const cellOf = (column: string) => cells[columns.indexOf(column)]!;
    const input = { model: 'jev', state: cellOf('state'), questions } as DecisionRequestInput;
    const request = validRequest(input, row, () => 'state');
    const labels: Record<string, Expected> = {};
    for (const column of columns) {
      if (column === 'state' || column === 'id' || cellOf(column).trim() === '') continue;
      labels[column] = expectedLabel(request.questions[column]!, cellOf(column), row, column);
    }
    if (Object.keys(labels).length === 0) throw new DatasetError('no labels: an item needs at least one expected answer', row, null);
    const id = seen.has('id') && cellOf('id').trim() !== '' ? cellOf('id').trim() : null;
    items.push({ line: row, id, request: input, labels });
  }
  if (items.length === 0) throw new DatasetError('the data set has no items', null, null);
  return items;
}

/**
 * The contract's own validation of one request; its error's `param` becomes the field
 * (`request.<param>` unless `field` says otherwise).
 */
function validRequest(
  input: DecisionRequestInput,
  line: number | null,
  field: (param: string | null) => string = (param) => (param ? `request.${param}` : 'request'),
): DecisionRequest {
  try {
    return parseDecisionRequest(input);
  } catch (e) {
    if (!(e instanceof JevError)) throw e;
    throw new DatasetError(e.message, line, field(e.param));
  }
}

function keysOf(request: DecisionRequest): string {
  return Object.keys(request.questions)
    .map((k) => `"${k}"`)
    .join(', ');
}

/** Refuses a set of more than maxItems items before reading any: `lines` holds each item's line, 0 for a blank one. */
function checkCount(lines: number[]): void {
  let count = 0;
  for (const line of lines) {
    if (line === 0) continue;
    count += 1;
    if (count > maxItems) throw new DatasetError(`a data set holds at most ${maxItems} items; split it into several sets`, line, null);
  }
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
