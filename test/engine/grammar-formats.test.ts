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
import { schemaToEbnf } from '../../src/engine/grammar/json-schema/compile.ts';
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

describe('the schema compiler: formats and patterns in its EBNF', () => {
  it('a format is written as a pattern of our own; annotations leave no trace', () => {
    const date = schemaToEbnf({ type: 'string', format: 'date', title: 't', description: 'd' });
    expect(date).toContain('"-"');
    expect(schemaToEbnf({ type: 'string', format: 'date' })).toBe(date);
    // An unknown format is an annotation: the grammar of any string.
    expect(schemaToEbnf({ type: 'string', format: 'iri' })).toBe(schemaToEbnf({ type: 'string' }));
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
  it('control characters: our grammar writes them only escaped, even without the jsonSafe mask (xgrammar\'s own let them in raw)', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', maxLength: 6 }, p: { type: 'string', pattern: '^.{1,4}$' } }, required: ['s', 'p'] };
    const raw = new GrammarCache(backend);
    try {
      const unsafe = await walks(raw, charVocabulary(false), schema, 60, 5);
      expect(unsafe.texts.length).toBeGreaterThan(30);
      expect(unsafe.texts.filter((t) => /[\u0000-\u001f]/.test(t))).toEqual([]);
      expectValid(schema, unsafe.texts);
    } finally {
      raw.clear();
    }
    const { texts } = await walks(safe, vocab, schema, 60, 5);
    expect(texts.some((t) => /[\u0000-\u001f]/.test(t))).toBe(false);
    expectValid(schema, texts);
  });

  it('integer ranges: digit-level, exact ([0, 120] never lets 121–129 through)', async () => {
    for (const schema of [{ type: 'integer', minimum: 0, maximum: 120 }, { type: 'integer', exclusiveMinimum: -13, exclusiveMaximum: 7 }, { type: ['integer', 'null'], minimum: 5, maximum: 9 }, { type: 'integer', minimum: -1000 }]) {
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
