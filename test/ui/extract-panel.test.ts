/**
 * The Extract tab's pure parts: the field builder's request (read back by the contract's own
 * parser), what it refuses before a call, where a refusal's `param` puts the message, the state cut
 * into highlighted pieces, and the snippets' bodies.
 */
import { describe, expect, it } from 'vitest';
import { parseExtractionRequest } from '../../src/contract/extraction-request.ts';
import type { ExtractionAnswer } from '../../src/contract/extraction-response.ts';
import { parseReferenceDate } from '../../src/ui/extract/extract-draft.ts';
import { placeExtractError } from '../../src/ui/extract/extract-errors.ts';
import { EXTRACT_PRESETS } from '../../src/ui/extract/extract-presets.ts';
import { fromFields, isFieldDraftList, newFieldDraft, toFields } from '../../src/ui/extract/field-draft.ts';
import { segments, sourceSpans } from '../../src/ui/extract/highlighted-state.tsx';
import { extractionSnippets } from '../../src/ui/shared/extraction-snippets.ts';

describe('the field builder', () => {
  for (const preset of EXTRACT_PRESETS) {
    it(`${preset.label}: drafts from the preset give back its fields, which the contract accepts as they are`, () => {
      const drafts = fromFields(preset.fields);
      expect(isFieldDraftList(JSON.parse(JSON.stringify(drafts)))).toBe(true);
      const { fields, problems } = toFields(drafts);
      expect(problems).toEqual([]);
      expect(fields).toEqual(preset.fields);
      const parsed = parseExtractionRequest({ model: 'jev', state: preset.state, fields, referenceDate: preset.referenceDate });
      expect(Object.keys(parsed.fields)).toEqual(Object.keys(preset.fields));
    });
  }

  it('refuses before a call: no key, a repeated key, decimals that are not 0–6; naming the field', () => {
    const a = { ...newFieldDraft('number', 'total'), decimals: '7' };
    const b = { ...newFieldDraft('text', 'total') };
    const c = { ...newFieldDraft('date', '  ') };
    const d = { ...newFieldDraft('list', 'xs'), items: 'number' as const, decimals: '1.5' };
    const { problems } = toFields([a, b, c, d]);
    expect(problems.map((p) => [p.draftId, p.field])).toEqual([
      [a.id, 'decimals'],
      [b.id, 'key'],
      [c.id, 'key'],
      [d.id, 'decimals'],
    ]);
    // What the page lets through, the contract accepts; what the page refuses, the contract refuses too.
    expect(() => parseExtractionRequest({ model: 'jev', state: 's', fields: { t: { type: 'number', decimals: 7 } } })).toThrow(/decimals/);
  });

  it('sends only the options a type reads', () => {
    const number = { ...newFieldDraft('number', 'n'), unit: ' EUR ', decimals: '2', items: 'date' as const };
    const duration = { ...newFieldDraft('duration', 'd'), integer: true, decimals: '3' };
    const date = { ...newFieldDraft('date', 'when'), unit: 'kg', decimals: '2' };
    expect(toFields([number, duration, date]).fields).toEqual({
      n: { type: 'number', unit: 'EUR', decimals: 2 },
      d: { type: 'duration', unit: 'minutes', integer: true },
      when: { type: 'date' },
    });
  });

  it('reads the reference date: empty is none, a non-date is named', () => {
    expect(parseReferenceDate('')).toEqual({ value: null });
    expect(parseReferenceDate('2024-02-29')).toEqual({ value: '2024-02-29' });
    expect(parseReferenceDate('2023-02-29')).toHaveProperty('error');
  });
});

describe("a refusal's param, placed", () => {
  const drafts = fromFields({ total: { type: 'number' }, who: { type: 'text' } });
  const info = (param: string | null) => ({ message: 'm', param, code: 'invalid_request', status: 400, reason: null });
  it('beside the field part, the state, the reference date, or on the form', () => {
    expect(placeExtractError(info('fields.total.decimals'), drafts)).toEqual({ fields: { [drafts[0]!.id]: { decimals: 'm' } } });
    expect(placeExtractError(info('fields.who.type'), drafts)).toEqual({ fields: { [drafts[1]!.id]: { type: 'm' } } });
    expect(placeExtractError(info('state'), drafts)).toEqual({ state: 'm', fields: {} });
    expect(placeExtractError(info('referenceDate'), drafts)).toEqual({ referenceDate: 'm', fields: {} });
    expect(placeExtractError(info('fields'), drafts)).toEqual({ form: 'm', fields: {} });
  });
});

describe('the highlighted state', () => {
  const text = 'Invoice INV-7 total 12.50 EUR due 2026-04-01';
  const at = (s: string) => ({ type: 'text' as const, part: 0, start: text.indexOf(s), end: text.indexOf(s) + s.length });
  const answers: Record<string, ExtractionAnswer> = {
    id: { type: 'text', value: 'INV-7', guess: 'INV-7', pNull: 0.1, confidence: 0.9, source: at('INV-7') },
    invoice: { type: 'text', value: 'Invoice INV', guess: 'Invoice INV', pNull: 0.1, confidence: 0.9, source: at('Invoice INV') },
    total: { type: 'number', value: 12.5, guess: 12.5, pNull: 0.2, confidence: 0.5, source: at('12.50') },
    po: { type: 'text', value: null, guess: 'x', pNull: 0.9, confidence: 0.1 },
    no: { type: 'refusal' },
  };

  it('cuts the text at every source, each piece keyed by the fields covering it; the pieces rebuild the text', () => {
    const pieces = segments(text, sourceSpans([text], answers));
    expect(pieces.map((p) => p.text).join('')).toBe(text);
    for (const key of ['id', 'invoice', 'total']) {
      const shown = pieces.filter((p) => p.keys.includes(key)).map((p) => p.text).join('');
      const s = (answers[key] as { source: { start: number; end: number } }).source;
      expect(shown).toBe(text.slice(s.start, s.end));
    }
    expect(pieces.find((p) => p.text === 'INV')?.keys.sort()).toEqual(['id', 'invoice']);
    expect(pieces.some((p) => p.keys.includes('po'))).toBe(false);
  });

  it('offsets a later part by the parts before it and the joining newlines', () => {
    const parts = ['first line', 'second INV-9'];
    const spans = sourceSpans(parts, { id: { type: 'text', value: 'INV-9', guess: 'INV-9', pNull: 0, confidence: 1, source: { type: 'text', part: 1, start: 7, end: 12 } } });
    expect(parts.join('\n').slice(spans[0]!.start, spans[0]!.end)).toBe('INV-9');
  });
});

describe('the extraction snippets', () => {
  it('carry the same body: fetch to /v1/extractions, the facade, experimental_extract over extractionModel', () => {
    const preset = EXTRACT_PRESETS[0]!;
    const body = { model: 'jev', state: preset.state, fields: preset.fields, referenceDate: preset.referenceDate };
    const [fetchSnippet, facade, ai] = extractionSnippets('http://x.test', body);
    expect(fetchSnippet!.code).toContain("fetch('http://x.test/v1/extractions'");
    const fetchBody = fetchSnippet!.code.slice(fetchSnippet!.code.indexOf('JSON.stringify(') + 15, fetchSnippet!.code.indexOf('),\n});'));
    expect(JSON.parse(fetchBody)).toEqual(body);
    const facadeBody = facade!.code.slice(facade!.code.indexOf('create(') + 7, facade!.code.indexOf(', { signal'));
    expect(JSON.parse(facadeBody)).toEqual(body);
    expect(ai!.code).toContain("jevLocal(client).extractionModel('jev')");
    expect(ai!.code).toContain(`referenceDate: "${preset.referenceDate}"`);
  });
});
