/**
 * A greedy step under a grammar offers the matcher the row's best tokens before it fills a mask
 * (chat/constraint.ts, `acceptFirst`): xgrammar fills a mask inside a length-bounded string by
 * walking the whole vocabulary. Checked here against the mask itself, on a real vocabulary (with
 * byte tokens and the JSON-safe and UTF-8 rules), in the engine's grammar worker and in-thread:
 * `acceptFirst` takes a token exactly when the filled mask allows it, takes the first such one,
 * and changes nothing when it takes none. Then whole replies: greedy chat taking tokens this way
 * writes the same text as greedy chat drawing every token from a filled mask.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, JsonSchema } from '../../src/contract/index.ts';
import { greedyCandidates, gumbelScores, maskedArgmax } from '../../src/engine/chat/sampler.ts';
import { offerPolicy } from '../../src/engine/chat/constraint.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { maskAllows, type GrammarMatcher } from '../../src/engine/grammar/backend.ts';
import { GrammarCache } from '../../src/engine/grammar/grammar-cache.ts';
import { stopTokenIds } from '../../src/engine/chat/stop-tokens.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';
import { GENERATED, loadEngine } from '../support/models.ts';

describe('greedyCandidates: the tokens greedy takes first, in order', () => {
  it('is the head of the whole row sorted by value, ties to the lower id, and its first allowed token is the masked argmax', () => {
    const random = seededRandom(7);
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(random() * 200);
      // Few distinct values: many ties; some -Infinity.
      const values = Float32Array.from({ length: n }, () => (random() < 0.1 ? -Infinity : Math.floor(random() * 12) / 4));
      const k = 1 + Math.floor(random() * 20);
      const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => (values[b]! > values[a]! ? 1 : values[b]! < values[a]! ? -1 : a - b));
      const got = greedyCandidates(values, k)!;
      expect(got).toEqual(sorted.slice(0, k));
      const mask = new Int32Array(Math.ceil(n / 32));
      for (let i = 0; i < n; i++) if (random() < 0.3) mask[i >> 5] = mask[i >> 5]! | (1 << (i & 31));
      const first = got.find((id) => maskAllows(mask, id));
      if (first !== undefined) expect(first).toBe(maskedArgmax(values, mask));
    }
  });

  it('gives none for a row with NaN (maskedArgmax does not order it so)', () => {
    expect(greedyCandidates([1, Number.NaN, 2], 2)).toBeNull();
  });
});

describe('gumbelScores: a draw at a temperature as an argmax', () => {
  it("gives each token noise of its own (the same whatever the row's length), and a new draw each step", () => {
    const row = Float32Array.from({ length: 50 }, (_, i) => Math.sin(i));
    const whole = gumbelScores(row, 0.8, 12345, new Float64Array(50)).slice();
    const head = gumbelScores(row.subarray(0, 20), 0.8, 12345, new Float64Array(50)).slice();
    expect(Array.from(head)).toEqual(Array.from(whole.subarray(0, 20)));
    expect(gumbelScores(row, 0.8, 12346, new Float64Array(50))[3]).not.toBe(whole[3]);
  });

  it('its argmax, and its masked argmax, fall on each token as often as the softmax (and the masked softmax) says', () => {
    const values = [0, 1, 2, -Infinity, 0.5];
    const mask = Int32Array.of(0b10011); // tokens 0, 1 and 4
    const random = seededRandom(5);
    const draws = 40_000;
    for (const t of [1, 0.5]) {
      const counts = [0, 0, 0, 0, 0];
      const masked = [0, 0, 0, 0, 0];
      const into = new Float64Array(5);
      for (let d = 0; d < draws; d++) {
        const scores = gumbelScores(values, t, (random() * 2 ** 32) >>> 0, into);
        counts[maskedArgmax(scores, Int32Array.of(-1))]!++;
        masked[maskedArgmax(scores, mask)]!++;
      }
      const softmax = (ids: number[]) => {
        const w = values.map((v, i) => (ids.includes(i) && v !== -Infinity ? Math.exp(v / t) : 0));
        const z = w.reduce((a, b) => a + b, 0);
        return w.map((x) => x / z);
      };
      for (const [got, p] of [[counts, softmax([0, 1, 2, 3, 4])], [masked, softmax([0, 1, 4])]] as const) {
        for (let i = 0; i < 5; i++) {
          // Within 5 standard deviations of the binomial (the seed is fixed: this does not flake).
          const sd = Math.sqrt(draws * p[i]! * (1 - p[i]!));
          expect(Math.abs(got[i]! - draws * p[i]!)).toBeLessThanOrEqual(5 * sd + 1e-9);
        }
      }
    }
  });
});

describe('acceptFirst keeps the rules the mask adds to the grammar', () => {
  // Characters; 'a' marked as not JSON-safe (as a control character is); a blank token (special); the stop token.
  const chars = ['{', '}', '"', ':', ' ', 'a', 'b', 'x', ''];
  const safe = new Int32Array(1).fill(-1);
  safe[0] = safe[0]! & ~(1 << 5);
  const vocab = { key: 'accept-first-chars', encoded: [...chars, ''], vocabType: 'raw' as const, prependSpace: false, width: chars.length + 1, stopTokenIds: [chars.length], jsonSafe: safe };
  const cache = new GrammarCache(new XGrammarBackend(), 4);
  afterAll(() => cache.clear());

  it('takes a token the JSON-safe rule rules out only where the mask would (jsonSafe false), and never a blank token', async () => {
    const grammar = await cache.grammar(vocab, { type: 'json_schema', schema: { type: 'object', properties: { x: { type: 'string', maxLength: 3 } }, required: ['x'] } });
    const into = '{"x": "'.split('').map((c) => chars.indexOf(c));
    const mask = new Int32Array(1);
    for (const jsonSafe of [true, false]) {
      const m = await cache.matcher(grammar);
      for (const t of into) expect(await m.acceptFirst([t])).toBe(t);
      await m.fillNextTokenBitmask(mask, jsonSafe);
      expect(maskAllows(mask, 5)).toBe(!jsonSafe);
      expect(maskAllows(mask, 8)).toBe(false);
      expect(await m.acceptFirst([8, 5, 6], jsonSafe)).toBe(jsonSafe ? 6 : 5);
      m.dispose();
    }
  });
});

const MODEL = 'tiny-random-llama';
const present = existsSync(join(GENERATED, MODEL, 'onnx', 'model.onnx'));
const SCHEMAS: Record<string, JsonSchema> = {
  'a bounded string': { type: 'object', properties: { note: { type: 'string', minLength: 2, maxLength: 12 } }, required: ['note'], additionalProperties: false },
  'a pattern and a format': { type: 'object', properties: { mail: { type: 'string', format: 'email', maxLength: 20 }, n: { type: 'integer', minimum: 1 } }, required: ['mail', 'n'], additionalProperties: false },
};

describe.skipIf(!present)(`acceptFirst against the filled mask, on ${MODEL}'s vocabulary`, () => {
  let engine: Engine;
  let inThread: GrammarCache;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, MODEL, 'fp32', { prefixCacheBytes: 0 });
    inThread = new GrammarCache(new XGrammarBackend(), 8);
  }, 120_000);
  afterAll(async () => {
    inThread?.clear();
    await engine?.languageModel?.dispose();
  });

  for (const where of ['grammar worker', 'in-thread'] as const) {
    for (const [name, schema] of Object.entries(SCHEMAS)) {
      it(`${where}: ${name}`, async () => {
        const lm = engine.languageModel!;
        const cache = where === 'grammar worker' ? engine.grammars : inThread;
        const vocab = cache.vocabulary(lm, stopTokenIds(lm));
        const grammar = await cache.grammar(vocab, { type: 'json_schema', schema });
        const random = seededRandom(3);
        const mask = new Int32Array(Math.ceil(vocab.width / 32));
        /** A matcher at the state after `path` (each token offered alone: taken), and the mask there. */
        const at = async (path: number[]): Promise<GrammarMatcher> => {
          const m = await cache.matcher(grammar);
          for (const token of path) expect(await m.acceptFirst([token])).toBe(token);
          await m.fillNextTokenBitmask(mask);
          return m;
        };
        const path: number[] = [];
        let checked = 0;
        for (let step = 0; step < 16; step++) {
          const m = await at(path);
          const allowed: number[] = [];
          const refused: number[] = [];
          for (let id = 0; id < vocab.width; id++) (maskAllows(mask, id) ? allowed : refused).push(id);
          if (allowed.length === 0) {
            m.dispose();
            break;
          }
          // Every refused token at once: none taken, and the mask after it is the same.
          const before = mask.slice();
          expect(await m.acceptFirst(refused)).toBe(-1);
          await m.fillNextTokenBitmask(mask);
          expect(mask).toEqual(before);
          m.dispose();
          // Allowed ones behind refused ones (a fresh matcher each): the first allowed is taken, and the matcher goes on from it.
          for (let s = 0; s < 3; s++) {
            const pick = allowed[Math.floor(random() * allowed.length)]!;
            const other = allowed[Math.floor(random() * allowed.length)]!;
            const lead = Array.from({ length: 40 }, () => refused[Math.floor(random() * refused.length)]!);
            const fresh = await at(path);
            expect(await fresh.acceptFirst([...lead, pick, other])).toBe(pick);
            checked++;
            if (!vocab.stopTokenIds.includes(pick)) {
              const twin = await at([...path, pick]);
              const expected = mask.slice();
              await fresh.fillNextTokenBitmask(mask);
              expect(mask).toEqual(expected);
              twin.dispose();
            }
            fresh.dispose();
          }
          // Walk on through a token that keeps the reply going (not the stop token).
          const next = allowed.filter((id) => !vocab.stopTokenIds.includes(id));
          if (next.length === 0) break;
          path.push(next[Math.floor(random() * next.length)]!);
        }
        expect(checked).toBeGreaterThan(20);
      }, 120_000);
    }
  }

});

const CHAT_MODEL = 'tiny-random-qwen2';
const chatPresent = existsSync(join(GENERATED, CHAT_MODEL, 'onnx', 'model.onnx'));
/** Strings whose masks are slow to fill on this 151,936-token vocabulary: the steps offer candidates. */
const SLOW: Record<string, JsonSchema> = {
  'a bounded string': { type: 'object', properties: { note: { type: 'string', minLength: 2, maxLength: 40 } }, required: ['note'], additionalProperties: false },
  'two bounded strings and a number': { type: 'object', properties: { a: { type: 'string', maxLength: 16 }, n: { type: 'integer', minimum: 1 }, b: { type: 'string', maxLength: 24 } }, required: ['a', 'n', 'b'], additionalProperties: false },
};

describe.skipIf(!chatPresent)(`replies whose steps offer candidates, on ${CHAT_MODEL}`, () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, CHAT_MODEL, 'fp32', { prefixCacheBytes: 0 });
  }, 120_000);
  afterAll(async () => {
    await engine?.languageModel?.dispose();
  });

  it('greedy chat taking its tokens so writes what greedy chat from filled masks writes', async () => {
    let n = 0;
    const before = engine.grammars.counters().takenFirst;
    for (const schema of Object.values(SLOW)) {
      for (const content of ['Fill it in.', 'Write a record, please.']) {
        const body = { model: 'jev', messages: [{ role: 'user' as const, content }], max_tokens: 40, temperature: 0, response_format: { type: 'json_schema' as const, json_schema: { name: 'r', schema } } };
        const fast = (await engine.chat(body, { id: `af${++n}` })) as ChatCompletion;
        // With logprobs every step fills its mask, and greedy is the argmax of the masked log-probabilities.
        const masked = (await engine.chat({ ...body, logprobs: true }, { id: `af${++n}` })) as ChatCompletion;
        expect(fast.choices[0]!.message.content).toBe(masked.choices[0]!.message.content);
        expect(fast.choices[0]!.finish_reason).toBe(masked.choices[0]!.finish_reason);
      }
    }
    // Most of these replies' tokens are inside the strings.
    expect(engine.grammars.counters().takenFirst - before).toBeGreaterThan(8);
  }, 300_000);

  it('a seeded reply is the same whether its steps offer candidates at every step or never', async () => {
    const saved = offerPolicy.slowFillMs;
    const taken = engine.grammars.counters().takenFirst;
    try {
      let n = 0;
      for (const schema of Object.values(SLOW)) {
        for (const [temperature, seed] of [[1, 3], [0.7, 8], [0, 0]] as const) {
          const body = { model: 'jev', messages: [{ role: 'user' as const, content: 'Fill it in.' }], max_tokens: 40, temperature, seed, response_format: { type: 'json_schema' as const, json_schema: { name: 'r', schema } } };
          offerPolicy.slowFillMs = 0;
          const offering = (await engine.chat(body, { id: `ap${++n}` })) as ChatCompletion;
          offerPolicy.slowFillMs = Infinity;
          const masks = (await engine.chat(body, { id: `ap${++n}` })) as ChatCompletion;
          expect(offering.choices[0]!.message.content).toBe(masks.choices[0]!.message.content);
          expect(offering.usage.completion_tokens).toBe(masks.usage.completion_tokens);
        }
      }
      expect(engine.grammars.counters().takenFirst - taken).toBeGreaterThan(8);
    } finally {
      offerPolicy.slowFillMs = saved;
    }
  }, 300_000);

  it('sampled chat offering its draws first writes valid replies, and takes tokens so', async () => {
    const Ajv = (await import('ajv/dist/2020.js')).default;
    const addFormats = (await import('ajv-formats')).default;
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    const taken = engine.grammars.counters().takenFirst;
    let ended = 0;
    for (const [i, schema] of Object.values(SLOW).entries()) {
      const validate = ajv.compile(schema);
      for (let seed = 0; seed < 4; seed++) {
        const body = { model: 'jev', messages: [{ role: 'user' as const, content: 'Fill it in.' }], max_tokens: 60, temperature: 1, seed: 100 * i + seed, response_format: { type: 'json_schema' as const, json_schema: { name: 'r', schema } } };
        const reply = (await engine.chat(body, { id: `as${i}-${seed}` })) as ChatCompletion;
        if (reply.choices[0]!.finish_reason !== 'stop') continue;
        ended++;
        expect(validate(JSON.parse(reply.choices[0]!.message.content!)), JSON.stringify(validate.errors)).toBe(true);
      }
    }
    expect(ended).toBeGreaterThan(0);
    expect(engine.grammars.counters().takenFirst).toBeGreaterThan(taken);
  }, 300_000);
});
