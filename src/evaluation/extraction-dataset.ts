/**
 * A labelled extraction set, JSONL, one item a line (docs/evaluation.md, "Extraction sets"):
 *
 *     {"id": "inv-001", "state": "…", "fields": {"total": {"type": "number", "decimals": 2}, …},
 *      "referenceDate": "2026-03-02", "expected": {"total": 177, "po_number": null, …},
 *      "sources": {"total": {"part": 0, "start": 120, "end": 126}, …}}
 *
 * `state`, `fields` and `referenceDate` are an extraction request's (read by the contract's own
 * parser, so a line the engine would refuse is refused here, naming the line and the field);
 * `expected` holds every field's value or null; `sources` (optional) labelled spans.
 */
import { parseExtractionRequest, type ExtractionRequestInput } from '../contract/extraction-request.ts';
import { JevError } from '../contract/errors.ts';
import { DatasetError } from './dataset-error.ts';
import type { ExpectedValue, ExtractionItem } from './extraction-types.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Whether the first non-blank line of a JSONL text is an extraction item (it has `fields`). */
export function isExtractionSet(text: string): boolean {
  const first = text.split('\n').find((l) => l.trim() !== '');
  if (!first) return false;
  try {
    const row: unknown = JSON.parse(first);
    return isObject(row) && 'fields' in row && !('questions' in row);
  } catch {
    return false;
  }
}

function expectedValue(type: string, items: string | undefined, v: unknown, line: number, field: string): ExpectedValue {
  if (v === null) return null;
  const bad = (what: string) => new DatasetError(`expected ${what}, got ${JSON.stringify(v)}`, line, field);
  switch (type) {
    case 'number':
    case 'duration':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw bad('a number or null');
      return v;
    case 'list':
      if (!Array.isArray(v)) throw bad('an array or null');
      if (items === 'number' ? !v.every((x) => typeof x === 'number') : !v.every((x) => typeof x === 'string')) throw bad(`an array of ${items === 'number' ? 'numbers' : 'strings'}`);
      return v as string[] | number[];
    default:
      if (typeof v !== 'string' || v === '') throw bad('a non-empty string or null');
      return v;
  }
}

function span(v: unknown, line: number, field: string): { part: number; start: number; end: number } {
  const ok = isObject(v) && [v['part'], v['start'], v['end']].every((n) => Number.isInteger(n) && (n as number) >= 0) && (v['end'] as number) > (v['start'] as number);
  if (!ok) throw new DatasetError('a source is {"part", "start", "end"}: whole numbers, end > start', line, field);
  return { part: v['part'] as number, start: v['start'] as number, end: v['end'] as number };
}

/** Parses a labelled extraction set; throws DatasetError naming the line and the field. */
export function parseExtractionSet(text: string): ExtractionItem[] {
  const items: ExtractionItem[] = [];
  const ids = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(raw);
    } catch (e) {
      throw new DatasetError(`not JSON: ${(e as Error).message}`, line, null);
    }
    if (!isObject(row)) throw new DatasetError('a line is a JSON object', line, null);
    const request = { model: 'jev', state: row['state'], fields: row['fields'], ...(row['referenceDate'] !== undefined ? { referenceDate: row['referenceDate'] } : {}) } as ExtractionRequestInput;
    let parsed;
    try {
      parsed = parseExtractionRequest(request);
    } catch (e) {
      if (e instanceof JevError) throw new DatasetError(e.message, line, e.param);
      throw e;
    }
    const id = typeof row['id'] === 'string' && row['id'] !== '' ? row['id'] : `line-${line}`;
    if (ids.has(id)) throw new DatasetError(`the id "${id}" is used twice`, line, 'id');
    ids.add(id);
    const given = row['expected'];
    if (!isObject(given)) throw new DatasetError('"expected" is an object: every field key → its value or null', line, 'expected');
    const types: Record<string, string> = {};
    const expected: Record<string, ExpectedValue> = {};
    for (const [key, field] of Object.entries(parsed.fields)) {
      types[key] = field.type;
      if (!(key in given)) throw new DatasetError(`no expected value for the field "${key}" (null if the state does not give it)`, line, `expected.${key}`);
      expected[key] = expectedValue(field.type, field.type === 'list' ? field.items : undefined, given[key], line, `expected.${key}`);
    }
    for (const key of Object.keys(given)) if (!(key in parsed.fields)) throw new DatasetError(`"${key}" is not a field of this line`, line, `expected.${key}`);
    const sources: ExtractionItem['sources'] = {};
    if (row['sources'] !== undefined) {
      if (!isObject(row['sources'])) throw new DatasetError('"sources" is an object: field key → {part, start, end}', line, 'sources');
      for (const [key, s] of Object.entries(row['sources'])) {
        if (!(key in parsed.fields)) throw new DatasetError(`"${key}" is not a field of this line`, line, `sources.${key}`);
        const at = span(s, line, `sources.${key}`);
        const part = parsed.parts[at.part];
        if (!part || at.end > part.text.length) throw new DatasetError(`the span ${at.start}–${at.end} of part ${at.part} lies outside the state`, line, `sources.${key}`);
        sources[key] = at;
      }
    }
    items.push({ line, id, request, types, expected, sources });
  });
  if (items.length === 0) throw new DatasetError('the set has no items', null, null);
  return items;
}
