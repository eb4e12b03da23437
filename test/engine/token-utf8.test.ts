/**
 * Well-formed UTF-8 across tokens (src/engine/grammar/token-utf8.ts), against an independent
 * decoder: the platform's TextDecoder in fatal mode, which throws at the first ill-formed byte
 * (in `stream` mode it waits on an incomplete last character instead). Then the grammar in use:
 * xgrammar 0.1.27 alone lets ill-formed sequences into a JSON string (overlong forms, surrogates,
 * F5–FF); through the backend, every one of them is masked and refused, while split characters
 * that are well-formed (é, €, 😀 written a byte a token) go through, and the string may close
 * only once the character is whole; on a byte-level vocabulary (Llama 3's) and a byte-fallback
 * one (Phi-3.5's `<0xNN>` tokens).
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stopTokenIds } from '../../src/engine/chat/chat.ts';
import { maskAllows } from '../../src/engine/grammar/backend.ts';
import { GrammarCache } from '../../src/engine/grammar/grammar-cache.ts';
import { TokenUtf8, UTF8_BOUNDARY, UTF8_INVALID, utf8AfterToken, utf8Step } from '../../src/engine/grammar/token-utf8.ts';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { GENERATED, loadEngine } from '../support/models.ts';
import { PERSON_SCHEMA } from '../support/person-schema.ts';

/** The independent reading: is `bytes` a prefix of well-formed UTF-8, and is it whole? */
function decoderSays(bytes: Uint8Array): { prefix: boolean; whole: boolean } {
  const prefix = (() => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
      return true;
    } catch {
      return false;
    }
  })();
  const whole = (() => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      return true;
    } catch {
      return false;
    }
  })();
  return { prefix, whole };
}

function run(bytes: Uint8Array, state = UTF8_BOUNDARY): number {
  for (const b of bytes) if (state !== UTF8_INVALID) state = utf8Step(state, b);
  return state;
}

/** GPT-2's byte-to-character map (the byte-level tokenizers' raw text), written out as its reference does. */
function gpt2Chars(): string[] {
  const bs: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) bs.push(b), cs.push(256 + n++);
  const out: string[] = [];
  bs.forEach((b, i) => (out[b] = String.fromCharCode(cs[i]!)));
  return out;
}
const GPT2 = gpt2Chars();

describe('the UTF-8 machine, against TextDecoder (fatal)', () => {
  it('every sequence of one and two bytes: well-formed prefix and whole character alike', () => {
    for (let a = 0; a < 256; a++) {
      for (let b = -1; b < 256; b++) {
        const bytes = Uint8Array.from(b < 0 ? [a] : [a, b]);
        const said = decoderSays(bytes);
        const state = run(bytes);
        expect(state !== UTF8_INVALID, `${[...bytes].map((x) => x.toString(16))}`).toBe(said.prefix);
        expect(state === UTF8_BOUNDARY, `${[...bytes].map((x) => x.toString(16))}`).toBe(said.whole);
      }
    }
  });

  it('random byte strings biased to the edges of the table (fast-check, 20,000 runs)', () => {
    const edge = fc.constantFrom(0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff);
    const byte = fc.oneof(edge, fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }).chain((u) => fc.array(byte, { maxLength: 12 }).map((e) => Uint8Array.from([...u, ...e]))), (bytes) => {
        const said = decoderSays(bytes);
        const state = run(bytes);
        return (state !== UTF8_INVALID) === said.prefix && (state === UTF8_BOUNDARY) === said.whole;
      }),
      { numRuns: 20_000, seed: 20261201 },
    );
  });

  it('a token read as its decoder writes it: byte-level characters, <0xNN> bytes, whole code points', () => {
    const byteLevel = (bytes: number[]) => bytes.map((b) => GPT2[b]!).join('');
    // "é" as C3 A9 in one token; split in two; an overlong C1 BF; a surrogate ED A0 80.
    expect(utf8AfterToken(UTF8_BOUNDARY, byteLevel([0xc3, 0xa9]), 'byte_level')).toBe(UTF8_BOUNDARY);
    expect(utf8AfterToken(utf8AfterToken(UTF8_BOUNDARY, byteLevel([0xc3]), 'byte_level'), byteLevel([0xa9]), 'byte_level')).toBe(UTF8_BOUNDARY);
    expect(utf8AfterToken(UTF8_BOUNDARY, byteLevel([0xc1, 0xbf]), 'byte_level')).toBe(UTF8_INVALID);
    expect(utf8AfterToken(UTF8_BOUNDARY, byteLevel([0xed, 0xa0]), 'byte_level')).toBe(UTF8_INVALID);
    // Every byte-level token of 1–4 random bytes agrees with the decoder.
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 4 }), (bytes) => {
        const state = utf8AfterToken(UTF8_BOUNDARY, byteLevel(bytes), 'byte_level');
        const said = decoderSays(Uint8Array.from(bytes));
        return (state !== UTF8_INVALID) === said.prefix && (state === UTF8_BOUNDARY) === said.whole;
      }),
      { numRuns: 5_000, seed: 7 },
    );
    expect(utf8AfterToken(UTF8_BOUNDARY, '<0xE2>', 'byte_fallback')).not.toBe(UTF8_INVALID);
    expect(utf8AfterToken(utf8AfterToken(utf8AfterToken(UTF8_BOUNDARY, '<0xE2>', 'byte_fallback'), '<0x82>', 'byte_fallback'), '<0xAC>', 'byte_fallback')).toBe(UTF8_BOUNDARY);
    expect(utf8AfterToken(UTF8_BOUNDARY, '<0xC0>', 'byte_fallback')).toBe(UTF8_INVALID);
    // Whole characters (a sentencepiece piece, a raw token, an emoji as a surrogate pair) only between characters.
    for (const type of ['byte_fallback', 'raw'] as const) {
      expect(utf8AfterToken(UTF8_BOUNDARY, '▁héllo😀', type)).toBe(UTF8_BOUNDARY);
      expect(utf8AfterToken(1, '▁hello', type)).toBe(UTF8_INVALID);
    }
    // A token with no bytes (special, stop): between characters only.
    expect(utf8AfterToken(UTF8_BOUNDARY, '', 'byte_level')).toBe(UTF8_BOUNDARY);
    expect(utf8AfterToken(4, '', 'byte_level')).toBe(UTF8_INVALID);
  });

  it("a vocabulary's masks: a token's bit is set exactly when its bytes continue the state well-formed", () => {
    const byteLevel = (bytes: number[]) => bytes.map((b) => GPT2[b]!).join('');
    const encoded = ['', byteLevel([0x61]), byteLevel([0xc3]), byteLevel([0xa9]), byteLevel([0xc1]), byteLevel([0xe0, 0x80]), byteLevel([0xe0, 0xa0]), byteLevel([0x80]), byteLevel([0xf5]), byteLevel([0xa9, 0x61])];
    const vocab = { encoded, vocabType: 'byte_level', width: 40 } as unknown as TokenVocabulary;
    const table = new TokenUtf8(vocab);
    const bytesOf = (t: string) => [...t].map((c) => GPT2.indexOf(c));
    for (let state = 0; state < 8; state++) {
      const mask = table.mask(state);
      expect(mask.length).toBe(2);
      for (let id = 0; id < 40; id++) {
        const text = encoded[id] ?? '';
        const expected = text === '' ? state === UTF8_BOUNDARY : run(Uint8Array.from(bytesOf(text)), state) !== UTF8_INVALID;
        expect(maskAllows(mask, id), `state ${state}, token ${id}`).toBe(expected);
      }
    }
    expect(table.after(UTF8_BOUNDARY, 2)).toBe(1);
    expect(table.after(1, 3)).toBe(UTF8_BOUNDARY);
    expect(table.after(1, 9)).toBe(UTF8_BOUNDARY);
  });
});

/** How each vocabulary writes a token of one byte: GPT-2's character for it, or sentencepiece's `<0xNN>`. */
const VOCABS = [
  { model: 'tiny-random-llama3', kind: 'byte-level', byteToken: (b: number) => GPT2[b]! },
  { model: 'tiny-random-phi3', kind: 'byte-fallback', byteToken: (b: number) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>` },
] as const;

describe.each(VOCABS.filter((v) => existsSync(join(GENERATED, v.model, 'onnx', 'model.onnx'))))('the grammar on $model ($kind): inside a JSON string', ({ model, byteToken }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, model, 'fp32', { prefixCacheBytes: 0 });
  });

  async function walk(bytes: number[][], jsonSafe = true) {
    const lm = engine.languageModel!;
    const cache = new GrammarCache(new XGrammarBackend());
    const vocab = cache.vocabulary(lm, stopTokenIds(lm));
    const grammar = await cache.grammar(vocab, { type: 'json_schema', schema: PERSON_SCHEMA });
    const matcher = await cache.matcher(grammar);
    try {
      const idOf = (token: number[]) => vocab.encoded.indexOf(token.map(byteToken).join(''));
      // The string's start a byte a token (a sentencepiece encode would write "▁" first).
      for (const b of new TextEncoder().encode('{"name": "a')) expect(matcher.accept(idOf([b]))).toBe(true);
      const mask = new Int32Array(Math.ceil(vocab.width / 32));
      for (const token of bytes) {
        const id = idOf(token);
        expect(id, `a token for ${token}`).toBeGreaterThanOrEqual(0);
        await matcher.fillNextTokenBitmask(mask, jsonSafe);
        if (!maskAllows(mask, id)) return { masked: token, refused: !matcher.accept(id) };
        expect(matcher.accept(id)).toBe(true);
      }
      await matcher.fillNextTokenBitmask(mask, jsonSafe);
      return { masked: null, closes: maskAllows(mask, idOf([0x22])) };
    } finally {
      matcher.dispose();
      cache.clear();
    }
  }

  it('ill-formed sequences are masked and refused at their first bad byte (xgrammar alone allows each)', async () => {
    const cases: [number[][], number[]][] = [
      [[[0xc1], [0xbf]], [0xc1]], // overlong U+007F
      [[[0xc0], [0xbf]], [0xc0]],
      [[[0xe0], [0x80]], [0x80]], // overlong three-byte form
      [[[0xed], [0xbf], [0xbf]], [0xbf]], // a UTF-16 surrogate
      [[[0xf4], [0xbf]], [0xbf]], // past U+10FFFF
      [[[0xf5]], [0xf5]],
      [[[0xc3], [0x61]], [0x61]], // a lead byte, then no continuation
    ];
    for (const [tokens, at] of cases) expect(await walk(tokens), JSON.stringify(tokens)).toEqual({ masked: at, refused: true });
    expect(await walk([[0xe0], [0x80]], false)).toEqual({ masked: [0x80], refused: true });
  });

  it('well-formed characters split a byte a token go through, and the string may close only after the whole character', async () => {
    for (const tokens of [[[0xc3], [0xa9]], [[0xe2], [0x82], [0xac]], [[0xf0], [0x9f], [0x98], [0x80]]]) {
      expect(await walk(tokens), JSON.stringify(tokens)).toEqual({ masked: null, closes: true });
      // One byte short of the character: the closing quote is not allowed yet.
      expect(await walk(tokens.slice(0, -1))).toEqual({ masked: null, closes: false });
    }
  });
});
