/**
 * Exact extractions on every model family's real tokenizer. For each field, `pNull` and
 * `confidence` are recomputed from full forward passes over the whole prompt tokenized at once
 * (test/support/reference.ts: transformers.js' own forward, no cache of the engine), and each
 * step's allowed tokens by stepping the field's machine over every token of the vocabulary one by
 * one (not the engine's sorted walk) or, for copied text, by searching the state's bytes; every
 * chosen token must be the most probable allowed one. Then: the answers do not depend on the
 * order of the fields nor on which others are asked, every value is well typed, and every text
 * value is the slice of the state its source names.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { extractionAnswerSchema, isCalendarDate, parseExtractionRequest, type ExtractionAnswer } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { promptFrame } from '../../src/engine/decision/decision-prompt.ts';
import { afterFixed, type ByteAutomaton } from '../../src/engine/extraction/byte-automaton.ts';
import { extract, type Extraction } from '../../src/engine/extraction/extract.ts';
import { fieldBlock } from '../../src/engine/extraction/extraction-prompt.ts';
import { fieldMachine, partsAutomaton } from '../../src/engine/extraction/field-machine.ts';
import { bytesOf, tokenBytes, type TokenBytes } from '../../src/engine/extraction/token-bytes.ts';
import type { LanguageModel } from '../../src/engine/model/language-model.ts';
import { PrefixCache } from '../../src/engine/model/prefix-cache.ts';
import { GENERATED, loadEngine, testModels } from '../support/models.ts';
import { referenceLogProbs } from '../support/reference.ts';

const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];
const MODELS = [
  ...testModels(),
  ...FAMILIES.map((id) => ({ id, root: GENERATED, present: existsSync(join(GENERATED, id, 'onnx', 'model.onnx')) })),
];

const STATE = [
  { type: 'text', text: 'Invoice INV-2024-117 from Müller & Söhne GmbH. Total due: 1,234.50 EUR by 2024-02-29.' },
  { type: 'json', value: { customer: 'ACME', seats: 12 } },
  { type: 'text', text: 'Call back at 14:30 on March 3. Meeting lasts 45 minutes. 日本語 note.' },
];
const FIELDS = {
  vendor: { type: 'text', instructions: 'Who sent the invoice?' },
  total: { type: 'number', decimals: 2, unit: 'EUR' },
  seats: { type: 'number', integer: true },
  due: { type: 'date' },
  callback: { type: 'time' },
  meeting: { type: 'datetime' },
  length: { type: 'duration', unit: 'minutes', decimals: 1 },
  names: { type: 'list', items: 'text' },
  amounts: { type: 'list', items: 'number', decimals: 2 },
};
/** The fields recomputed from full passes (each step a full pass and a walk of the whole vocabulary); the others are checked for type, order and sources. */
const EXACT_FIELDS = ['vendor', 'total', 'due', 'callback'];
const BODY = { model: 'jev', state: STATE, fields: FIELDS, referenceDate: '2024-03-01' };

const big = () => new PrefixCache(1 << 30);

/** Tokens allowed from `state`: every token stepped through the machine byte by byte (or, for copies, searched in the text). */
function naiveAllowed(table: TokenBytes, m: ByteAutomaton<unknown>, state: unknown): Map<number, unknown> {
  const out = new Map<number, unknown>();
  for (let id = 0; id < table.width; id++) {
    const b = bytesOf(table, id);
    if (b.length === 0) continue;
    let s: unknown = state;
    for (const byte of b) {
      s = m.step(s, byte);
      if (s === null) break;
    }
    if (s !== null) out.set(id, s);
  }
  return out;
}

/**
 * The same answers: every value, guess, source and type equal, `pNull` and `confidence` within
 * 1e-5 (the fields' values are decoded as rows of batched passes, whose matrix products may round
 * their last bits differently from a pass of one row).
 */
function expectSameAnswers(got: Record<string, ExtractionAnswer>, want: Record<string, ExtractionAnswer>): void {
  expect(Object.keys(got).sort()).toEqual(Object.keys(want).sort());
  const close = (path: string, a: unknown, b: unknown): void => {
    if (typeof a === 'number' && typeof b === 'number' && /(pNull|confidence)$/.test(path)) {
      expect(Math.abs(a - b), path).toBeLessThan(1e-5);
    } else if (a && b && typeof a === 'object' && typeof b === 'object') {
      expect(Object.keys(a).sort(), path).toEqual(Object.keys(b).sort());
      for (const k of Object.keys(a)) close(`${path}.${k}`, (a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]);
    } else expect(a, path).toEqual(b);
  };
  for (const key of Object.keys(want)) close(key, got[key], want[key]);
}

function checkWellTyped(key: string, a: ExtractionAnswer, parts: { type: string; text: string }[]): void {
  expect(extractionAnswerSchema.safeParse(a).success, key).toBe(true);
  if (a.type === 'refusal') return;
  const f = FIELDS[key as keyof typeof FIELDS] as { type: string; decimals?: number; integer?: boolean; items?: string };
  expect(a.type).toBe(f.type);
  if (a.type === 'text') {
    expect(a.source, `${key} has a source`).toBeDefined();
    const s = a.source!;
    expect(parts[s.part]!.type).toBe('text');
    expect(parts[s.part]!.text.slice(s.start, s.end)).toBe(a.guess);
  }
  if (a.type === 'date') expect(isCalendarDate(a.guess), a.guess).toBe(true);
  if (a.type === 'time') expect(a.guess).toMatch(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/);
  if (a.type === 'datetime') {
    expect(a.guess).toMatch(/^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$/);
    expect(isCalendarDate(a.guess.slice(0, 10))).toBe(true);
  }
  if (a.type === 'number' || a.type === 'duration') {
    const places = (String(a.guess).split('.')[1] ?? '').length;
    expect(places).toBeLessThanOrEqual(f.integer ? 0 : (f.decimals ?? 6));
    if (a.type === 'duration') expect(a.guess).toBeGreaterThanOrEqual(0);
  }
  if (a.type === 'list') {
    expect(a.items?.length ?? 0).toBe(a.value?.length ?? 0);
    for (const [i, item] of a.guess.entries()) {
      if (f.items === 'text' && a.items) {
        const s = a.items[i]!.source!;
        expect(parts[s.part]!.text.slice(s.start, s.end)).toBe(item);
      } else expect(Number.isFinite(item)).toBe(true);
    }
  }
  if (a.value !== null) expect(a.value).toEqual(a.guess);
  expect(a.value === null).toBe(a.pNull >= 0.5);
}

for (const m of MODELS) {
  describe(`exact extractions on ${m.id}`, () => {
    let engine: Engine;
    let lm: LanguageModel;
    let first: Extraction;
    const request = parseExtractionRequest(BODY);
    beforeAll(async () => {
      if (!m.present) throw new Error(`${m.id} is not at ${m.root}: run \`npm run models\``);
      engine = await loadEngine(m.root, m.id);
      lm = engine.languageModel!;
      first = await extract(lm, request, { prefixes: big() });
    }, 600_000);
    afterAll(async () => {
      await lm?.dispose();
    });

    it(`pNull and confidence of ${EXACT_FIELDS.join(', ')} equal the full-prompt reference within 1e-5, each step the most probable allowed token`, async () => {
      const table = tokenBytes(lm);
      const frame = promptFrame(lm, request.state);
      for (const key of EXACT_FIELDS) {
        const trace = first.traces[key]!;
        const { plan, decoded } = trace;
        const field = request.fields[key]!;
        const text = frame.prefix + fieldBlock(key, field, request.referenceDate) + frame.tail + frame.lead;
        const ctx = [...first.prefixIds, ...plan.promptIds];
        // The engine's prompt and null path are the whole text's own tokenization.
        const whole = lm.encode(text + 'null', frame.addSpecialTokens);
        expect(whole, key).toEqual([...ctx, ...plan.nullPath]);
        // pNull
        let logA = 0;
        for (let j = 0; j < plan.nullPath.length; j++) logA += (await referenceLogProbs(lm, [...ctx, ...plan.nullPath.slice(0, j)]))[plan.nullPath[j]!]!;
        const root = await referenceLogProbs(lm, ctx);
        const machine = afterFixed(plan.preamble, fieldMachine(field, () => partsAutomaton(request.parts))) as ByteAutomaton<unknown>;
        let allowed = naiveAllowed(table, machine, machine.start);
        let v = 0;
        for (const id of allowed.keys()) v += Math.exp(root[id]!);
        const a = Math.exp(logA);
        if (allowed.has(plan.nullPath[0]!)) v = Math.max(0, v - a);
        const pNull = a / (a + v);
        expect(Math.abs(decoded.pNull - pNull), `${key} pNull`).toBeLessThan(1e-5);
        expect(decoded.valueIds, `${key} decoded`).not.toBeNull();
        // confidence, step by step
        let state: unknown = machine.start;
        let confidence = 1;
        const ids = decoded.valueIds!;
        for (let i = 0; i <= ids.length; i++) {
          const accepting = machine.accepts(state);
          if (i === ids.length && accepting && allowed.size === 0) break;
          const lp = i === 0 ? root : await referenceLogProbs(lm, [...ctx, ...ids.slice(0, i)]);
          const choices = [...allowed.keys(), ...(accepting ? table.endTokens : [])];
          let z = 0;
          let max = -Infinity;
          for (const id of choices) {
            z += Math.exp(lp[id]!);
            max = Math.max(max, lp[id]!);
          }
          const chosen = i < ids.length ? ids[i]! : choices.filter((id) => table.endTokens.includes(id)).reduce((b, id) => (lp[id]! > lp[b]! ? id : b));
          expect(lp[chosen]!, `${key} step ${i} is the most probable allowed token`).toBeGreaterThanOrEqual(max - 1e-6);
          confidence *= Math.exp(lp[chosen]!) / z;
          if (i === ids.length) break;
          state = allowed.get(chosen);
          allowed = naiveAllowed(table, machine, state);
        }
        expect(Math.abs(decoded.confidence - confidence), `${key} confidence`).toBeLessThan(1e-5);
      }
    }, 600_000);

    it('every value is well typed; text values are the slice their source names', () => {
      for (const [key, a] of Object.entries(first.response.answers)) checkWellTyped(key, a, request.parts);
    });

    it('answers do not depend on the order of the fields nor on which others are asked (probabilities within 1e-5: batched rows, decode-rows.ts)', async () => {
      const keys = Object.keys(FIELDS);
      const reversed = Object.fromEntries([...keys].reverse().map((k) => [k, FIELDS[k as keyof typeof FIELDS]]));
      const again = await extract(lm, parseExtractionRequest({ ...BODY, fields: reversed }), { prefixes: big() });
      expectSameAnswers(again.response.answers, first.response.answers);
      for (const key of ['total', 'names', 'due']) {
        const alone = await extract(lm, parseExtractionRequest({ ...BODY, fields: { [key]: FIELDS[key as keyof typeof FIELDS] } }), { prefixes: null });
        expectSameAnswers({ [key]: alone.response.answers[key]! }, { [key]: first.response.answers[key]! });
      }
    }, 300_000);
  });
}
