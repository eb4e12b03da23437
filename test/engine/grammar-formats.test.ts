/**
 * The grammar room against an independent validator, over a character-level vocabulary (one
 * token per character, so a random walk reaches every string the grammar allows): walks drawn at
 * random through the compiled grammar of each enforced `format`, each rewritten `pattern`, and the
 * workarounds of xgrammar 0.1.27's bugs, must parse and validate with ajv (+ ajv-formats, full).
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { enforceablePattern, enforcedFormats, type JsonSchema } from '../../src/contract/index.ts';
import { maskAllows } from '../../src/engine/grammar/backend.ts';
import { GrammarCache } from '../../src/engine/grammar/grammar-cache.ts';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';
import { xgrammarSchema } from '../../src/engine/grammar/xgrammar-schema.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

const CHARS = [...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)), 'é', '☃', '\u0001', '\t', '\n'];
/** Characters, then the stop token (raw text ""). */
function charVocabulary(jsonSafe: boolean): TokenVocabulary {
  const width = CHARS.length + 1;
  const mask = new Int32Array(Math.ceil(width / 32)).fill(-1);
  if (jsonSafe) CHARS.forEach((c, id) => c < ' ' && (mask[id >> 5] = mask[id >> 5]! & ~(1 << (id & 31))));
  return { key: `chars-${jsonSafe}`, encoded: [...CHARS, ''], vocabType: 'raw', prependSpace: false, width, stopTokenIds: [CHARS.length], jsonSafe: mask };
}
const STOP = CHARS.length;

const backend = new XGrammarBackend();
const safe = new GrammarCache(backend, 64);
const vocab = charVocabulary(true);
afterAll(() => safe.clear());

/** `n` random walks through the grammar of `schema` (at most `steps` characters each): the texts that ended with the stop token. */
async function walks(cache: GrammarCache, v: TokenVocabulary, schema: JsonSchema, n: number, seed = 1, steps = 120): Promise<{ texts: string[]; unfinished: number }> {
  const grammar = await cache.grammar(v, { type: 'json_schema', schema });
  const random = seededRandom(seed);
  const mask = new Int32Array(Math.ceil(v.width / 32));
  const texts: string[] = [];
  let unfinished = 0;
  for (let w = 0; w < n; w++) {
    const matcher = await cache.matcher(grammar);
    try {
      let text = '';
      for (let step = 0; step < steps && !matcher.isTerminated(); step++) {
        await matcher.fillNextTokenBitmask(mask);
        const allowed = Array.from({ length: v.width }, (_, id) => id).filter((id) => maskAllows(mask, id));
        expect(allowed.length, `no token allowed after ${JSON.stringify(text)}`).toBeGreaterThan(0);
        // Stop as soon as allowed half the time, so that walks end.
        const id = allowed.includes(STOP) && random() < 0.5 ? STOP : allowed[Math.floor(random() * allowed.length)]!;
        expect(matcher.accept(id)).toBe(true);
        if (id !== STOP) text += CHARS[id];
      }
      if (matcher.isTerminated()) texts.push(text);
      else unfinished++;
    } finally {
      matcher.dispose();
    }
  }
  return { texts, unfinished };
}

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);

function expectValid(schema: JsonSchema, texts: string[]): void {
  const validate = ajv.compile(schema);
  for (const text of texts) {
    let value: unknown;
    expect(() => (value = JSON.parse(text)), text).not.toThrow();
    expect(validate(value), `${text}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
}

describe('xgrammarSchema: the rewrite for xgrammar', () => {
  it('integer ranges as enums (a type list keeps its other types, definitions stay at the root); annotations dropped', () => {
    expect(xgrammarSchema({ type: 'integer', minimum: 2, exclusiveMaximum: 5, title: 't', description: 'd' })).toEqual({ enum: [2, 3, 4] });
    expect(xgrammarSchema({ $defs: { A: { type: 'string' } }, type: ['integer', 'null'], minimum: 0, maximum: 1 })).toEqual({
      $defs: { A: { type: 'string' } },
      anyOf: [{ enum: [0, 1] }, { type: 'null' }],
    });
    expect(xgrammarSchema({ type: 'object', properties: { title: { type: 'integer', minimum: 1, maximum: 2 } }, required: ['title'] })).toEqual({
      type: 'object',
      properties: { title: { enum: [1, 2] } },
      required: ['title'],
    });
  });

  it('patterns anchored and narrowed; formats as patterns where we have our own', () => {
    expect(xgrammarSchema({ type: 'string', pattern: 'a.b' })).toEqual({ type: 'string', pattern: '^(?:a[ !#-\\[\\]-~]b)$' });
    const date = xgrammarSchema({ type: 'string', format: 'date' });
    expect(date['format']).toBeUndefined();
    expect(new RegExp(date['pattern'] as string).test('2024-02-29')).toBe(true);
    expect(new RegExp(date['pattern'] as string).test('2023-02-29')).toBe(false);
    expect(xgrammarSchema({ type: 'string', format: 'ipv6' })).toEqual({ type: 'string', format: 'ipv6' });
  });
});

describe('enforced formats validate with ajv-formats', () => {
  for (const format of enforcedFormats) {
    it(format, async () => {
      const schema = { type: 'string', format };
      const { texts } = await walks(safe, vocab, schema, 150, 7, 200);
      expect(texts.length).toBeGreaterThan(50);
      expectValid(schema, texts);
    });
  }
});

describe('rewritten patterns', () => {
  const patterns = ['^[a-z]{1,8}$', '[0-9]+', '^.{0,6}$', '^\\S{1,5}$', '^[^a-c]{2}$', '^(?:ab|cd)+x?$', '^\\w+@\\w+\\.com$', '^é+☃?$', '^a|^b$', '^\\d{3}-\\d{4}$'];
  for (const pattern of patterns) {
    it(pattern, async () => {
      const schema = { type: 'string', pattern };
      const { texts } = await walks(safe, vocab, schema, 100, 3);
      expect(texts.length).toBeGreaterThan(50);
      expectValid(schema, texts);
      const rewritten = enforceablePattern(pattern);
      expect(rewritten.ok).toBe(true);
    });
  }
});

describe("xgrammar 0.1.27's bugs, worked around", () => {
  it('control characters: xgrammar lets them into length-bounded strings; the jsonSafe mask keeps them out', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', maxLength: 6 }, p: { type: 'string', pattern: '^.{1,4}$' } }, required: ['s', 'p'] };
    const raw = new GrammarCache(backend);
    try {
      const unsafe = await walks(raw, charVocabulary(false), schema, 60, 5);
      const broken = unsafe.texts.filter((t) => /[\u0000-\u001f]/.test(t));
      expect(broken.length, 'without the mask, xgrammar writes raw control characters').toBeGreaterThan(0);
      for (const t of broken) expect(() => JSON.parse(t)).toThrow();
    } finally {
      raw.clear();
    }
    const { texts } = await walks(safe, vocab, schema, 60, 5);
    expect(texts.some((t) => /[\u0000-\u001f]/.test(t))).toBe(false);
    expectValid(schema, texts);
  });

  it('integer ranges: written as enums, exact ([0, 120] never lets 121–129 through)', async () => {
    for (const schema of [{ type: 'integer', minimum: 0, maximum: 120 }, { type: 'integer', exclusiveMinimum: -13, exclusiveMaximum: 7 }, { type: ['integer', 'null'], minimum: 5, maximum: 9 }]) {
      const { texts } = await walks(safe, vocab, schema, 200, 11);
      expectValid(schema, texts);
    }
  });

  it('"." in a pattern: never a quote or a backslash', async () => {
    const schema = { type: 'string', pattern: '^.{3}$' };
    const { texts } = await walks(safe, vocab, schema, 200, 13);
    expect(texts.length).toBe(200);
    expectValid(schema, texts);
  });
});
