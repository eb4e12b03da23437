// The data-set parsers (src/evaluation/dataset.ts): exact parse results for JSONL and CSV, every
// error naming its line and field, and the example sets under eval/ (they parse, the CSV variant
// says the same as the JSONL, and scripts/eval/write-examples.ts reproduces them byte for byte).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QuestionInput } from '../../src/contract/index.ts';
import { DatasetError, maxItems, parseCsv, parseDataset, parseJsonl } from '../../src/evaluation/index.ts';
import { exampleFiles, REVIEWS, TICKETS } from '../../scripts/eval/write-examples.ts';

const REPO = resolve(import.meta.dirname, '../..');

const questions = {
  queue: { type: 'choice', criteria: { billing: 'Money', technical: null, '1': 'the first' } },
  urgent: { type: 'noul' },
  mood: { type: 'score', criteria: ['calm', 'upset', 'angry'] },
} satisfies Record<string, QuestionInput>;

const line = (fields: Record<string, unknown>) => JSON.stringify({ state: 'The app crashes.', questions, ...fields });

/** Runs `f`, expects a DatasetError at this line and field, with a message containing `text`. */
function expectDatasetError(f: () => unknown, at: number | null, field: string | null, text: string): void {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a DatasetError').toBeInstanceOf(DatasetError);
  const error = caught as DatasetError;
  expect({ line: error.line, field: error.field }).toEqual({ line: at, field });
  expect(error.message).toContain(text);
  if (at !== null) expect(error.message).toMatch(new RegExp(`^line ${at}\\b`));
}

describe('parseJsonl', () => {
  it('reads a request plus labels per non-blank line, defaulting the model and writing labels canonically', () => {
    const text = [
      line({ id: 't1', labels: { queue: 'billing', urgent: true, mood: 'angry' } }),
      '',
      '   ',
      line({ id: 7, model: 'jev', calibrate: true, labels: { urgent: 'FALSE', mood: 1, queue: 1 } }),
      `${line({ labels: { mood: '2' } })}\r`,
    ].join('\n');
    expect(parseJsonl(`\uFEFF${text}\n`)).toEqual([
      { line: 1, id: 't1', request: { model: 'jev', state: 'The app crashes.', questions }, labels: { queue: 'billing', urgent: true, mood: 2 } },
      { line: 4, id: '7', request: { model: 'jev', state: 'The app crashes.', questions, calibrate: true }, labels: { urgent: false, mood: 1, queue: '1' } },
      { line: 5, id: null, request: { model: 'jev', state: 'The app crashes.', questions }, labels: { mood: 2 } },
    ]);
  });

  it('reads a grade label before an index: with grades "1".."3", "2" is the second grade', () => {
    const stars = { stars: { type: 'score', criteria: ['1', '2', '3'] } };
    const items = parseJsonl(JSON.stringify({ state: 's', questions: stars, labels: { stars: '2' } }));
    expect(items[0]!.labels).toEqual({ stars: 1 });
  });

  it.each([
    ['invalid JSON', '{"state": "x",', 1, null, 'not valid JSON'],
    ['an array', '[1, 2]', 1, null, 'not an array'],
    ['a number', '42', 1, null, 'a JSON object'],
    ['an empty state', line({ state: '', labels: { urgent: true } }), 1, 'request.state', "'state' must not be empty"],
    ['a bad question type', JSON.stringify({ state: 's', questions: { q: { type: 'yesno' } }, labels: { q: true } }), 1, 'request.questions.q.type', 'must be one of'],
    ['another model', line({ model: 'gpt-4o', labels: { urgent: true } }), 1, 'request.model', '"gpt-4o"'],
    ['no questions', JSON.stringify({ state: 's', labels: { q: true } }), 1, 'request.questions', 'questions'],
    ['a calibration profile', line({ calibration: 'p1', labels: { urgent: true } }), 1, 'request.calibration', 'the run does'],
    ['prediction sets', line({ prediction_set: { alpha: 0.1 }, labels: { urgent: true } }), 1, 'request.prediction_set', 'the run does'],
    ['no labels', line({}), 1, 'labels', 'needs "labels"'],
    ['labels not an object', line({ labels: ['billing'] }), 1, 'labels', 'not ["billing"]'],
    ['empty labels', line({ labels: {} }), 1, 'labels', 'at least one expected answer'],
    ['a label for a question not asked', line({ labels: { topic: 'x' } }), 1, 'labels.topic', 'no question "topic"'],
    ['a noul label that is not true/false', line({ labels: { urgent: 'yes' } }), 1, 'labels.urgent', 'true or false, not "yes"'],
    ['a choice label that is not an option', line({ labels: { queue: 'sales' } }), 1, 'labels.queue', '"sales" is not an option'],
    ['a choice label of the wrong type', line({ labels: { queue: true } }), 1, 'labels.queue', 'one of its option keys'],
    ['a score index out of range', line({ labels: { mood: 3 } }), 1, 'labels.mood', 'an integer from 0 to 2'],
    ['a fractional score', line({ labels: { mood: 1.5 } }), 1, 'labels.mood', 'not 1.5'],
    ['a score label not in the legend', line({ labels: { mood: 'furious' } }), 1, 'labels.mood', 'not "furious"'],
    ['an id that is an object', line({ id: { a: 1 }, labels: { urgent: true } }), 1, 'id', 'a string or a number'],
  ])('refuses %s, naming the line and the field', (_, text, at, field, message) => {
    expectDatasetError(() => parseJsonl(text), at, field, message);
  });

  it('names the line of the bad item among good ones, blank lines counted', () => {
    const text = [line({ labels: { urgent: true } }), '', line({ labels: { urgent: true } }), line({ labels: { mood: 'livid' } })].join('\n');
    expectDatasetError(() => parseJsonl(text), 4, 'labels.mood', 'not "livid"');
  });

  it('quotes an odd question key in the field', () => {
    const odd = { 'is it spam?': { type: 'noul' } };
    expectDatasetError(() => parseJsonl(JSON.stringify({ state: 's', questions: odd, labels: { 'is it spam?': 2 } })), 1, 'labels["is it spam?"]', 'true or false');
  });

  it('refuses an empty set, and a set of more than maxItems items, before reading them', () => {
    expectDatasetError(() => parseJsonl('\n  \n'), null, null, 'no items');
    const one = JSON.stringify({ state: 's', questions: { q: { type: 'noul' } }, labels: { q: true } });
    // The first line is bad: a count check that read items first would report it instead.
    const text = ['not json', ...Array.from({ length: maxItems }, () => one)].join('\n');
    expectDatasetError(() => parseJsonl(text), maxItems + 1, null, `at most ${maxItems} items`);
  });
});

describe('parseCsv', () => {
  it('reads state, id and one column per question; an empty cell is unlabelled; rows count from 1 below the header', () => {
    const csv = '\uFEFFid,state,queue,urgent,mood\r\nx1,"Charged twice, again.",billing,TRUE,angry\r\n\r\n,"Line one\nline two",,,0\r\nx3,Hello,1,false,\r\n';
    const request = (state: string) => ({ model: 'jev', state, questions });
    expect(parseCsv(csv, questions)).toEqual([
      { line: 1, id: 'x1', request: request('Charged twice, again.'), labels: { queue: 'billing', urgent: true, mood: 2 } },
      { line: 3, id: null, request: request('Line one\nline two'), labels: { mood: 0 } },
      { line: 4, id: 'x3', request: request('Hello'), labels: { queue: '1', urgent: false } },
    ]);
  });

  it('needs no id column, nor a column for every question', () => {
    expect(parseCsv('state,urgent\nok,true\n', questions)).toEqual([{ line: 1, id: null, request: { model: 'jev', state: 'ok', questions }, labels: { urgent: true } }]);
  });

  it.each([
    ['a column that is not a question key', 'state,queue,topic\nhi,billing,x\n', null, 'topic', 'column "topic" is not a question key'],
    ['no state column', 'text,queue\nhi,billing\n', null, 'text', 'not a question key'],
    ['no state column (only labels)', 'queue\nbilling\n', null, 'state', 'no "state" column'],
    ['a column named twice', 'state,queue,queue\nhi,billing,billing\n', null, 'queue', 'twice'],
    ['an empty column name', 'state,,queue\nhi,,billing\n', null, 'header', 'empty column name'],
    ['no header', '', null, 'header', 'no header row'],
    ['a row with too many fields', 'state,queue\nhi,billing\nho,billing,extra\n', 2, null, '3 fields; the header has 2'],
    ['an unterminated quote', 'state,queue\nhi,billing\n"ho,billing\n', 2, null, 'not valid CSV'],
    ['an empty state', 'state,queue\n  ,billing\n', 1, 'state', "'state' must not be empty"],
    ['a bad label', 'state,queue,urgent\nhi,billing,maybe\n', 1, 'urgent', 'true or false, not "maybe"'],
    ['a row with no label', 'state,queue\nhi,\n', 1, null, 'at least one expected answer'],
  ])('refuses %s, naming the row and the column', (_, csv, at, field, message) => {
    expectDatasetError(() => parseCsv(csv, questions), at, field, message);
  });

  it('refuses invalid questions, naming the field', () => {
    const bad = { q: { type: 'choice', criteria: { only: null } } } as unknown as Record<string, QuestionInput>;
    expectDatasetError(() => parseCsv('state,q\nhi,only\n', bad), null, 'questions.q.criteria', 'at least 2 options');
  });
});

describe('parseDataset', () => {
  it('reads by extension', () => {
    const jsonl = line({ labels: { urgent: true } });
    expect(parseDataset('set.JSONL', jsonl)).toEqual(parseJsonl(jsonl));
    expect(parseDataset('dir.v2/set.ndjson', jsonl)).toEqual(parseJsonl(jsonl));
    expect(parseDataset('set.csv', 'state,urgent\nhi,true\n', questions)).toEqual(parseCsv('state,urgent\nhi,true\n', questions));
  });

  it('says what is missing or unknown', () => {
    expectDatasetError(() => parseDataset('set.csv', 'state,urgent\nhi,true\n'), null, 'questions', 'give its questions');
    expectDatasetError(() => parseDataset('set.txt', 'x'), null, null, 'unknown data-set format ".txt"');
    expectDatasetError(() => parseDataset('set', 'x'), null, null, 'a .jsonl or a .csv file');
  });
});

describe('the example sets', () => {
  const read = (path: string) => readFileSync(resolve(REPO, path), 'utf8');

  it('are what scripts/eval/write-examples.ts writes', () => {
    const files = exampleFiles();
    expect(Object.keys(files).sort()).toEqual(['eval/appointments.extraction.jsonl', 'eval/invoices.extraction.jsonl', 'eval/sentiment.csv', 'eval/sentiment.jsonl', 'eval/sentiment.questions.json', 'eval/ticket-routing.jsonl']);
    for (const [path, content] of Object.entries(files)) expect(read(path), path).toBe(content);
  });

  it('ticket routing: 160 tickets, every answer of every question used, unique texts', () => {
    const items = parseDataset('ticket-routing.jsonl', read('eval/ticket-routing.jsonl'));
    expect(items).toHaveLength(TICKETS);
    expect(TICKETS).toBeGreaterThanOrEqual(100);
    expect(new Set(items.map((i) => i.request.state)).size).toBe(items.length);
    expect(new Set(items.map((i) => i.labels['queue']))).toEqual(new Set(['billing', 'technical', 'account', 'shipping']));
    expect(new Set(items.map((i) => i.labels['urgent']))).toEqual(new Set([true, false]));
    expect(new Set(items.map((i) => i.labels['frustration']))).toEqual(new Set([0, 1, 2, 3, 4]));
  });

  it('sentiment: 120 reviews whose sentiment agrees with their stars, the same in JSONL and CSV', () => {
    const items = parseDataset('sentiment.jsonl', read('eval/sentiment.jsonl'));
    expect(items).toHaveLength(REVIEWS);
    const fromCsv = parseDataset('sentiment.csv', read('eval/sentiment.csv'), JSON.parse(read('eval/sentiment.questions.json')));
    expect(fromCsv.map((i) => [i.id, i.request.state, i.labels])).toEqual(items.map((i) => [i.id, i.request.state, i.labels]));
    for (const item of items) {
      const stars = item.labels['stars'] as number;
      expect(item.labels['sentiment'], item.id!).toBe(stars >= 3 ? 'positive' : stars === 2 ? 'neutral' : 'negative');
    }
    expect(new Set(items.map((i) => i.labels['stars']))).toEqual(new Set([0, 1, 2, 3, 4]));
  });
});
