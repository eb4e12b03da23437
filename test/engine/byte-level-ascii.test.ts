/**
 * The ASCII path of the ByteLevel pre-tokenizer (src/engine/model/byte-level-ascii.ts) against
 * transformers.js' own, on every generated family's real tokenizer (the Llama 3 and Qwen ones
 * put ByteLevel inside a Sequence after a Split): the same ids for generated text of every kind —
 * ASCII words, every control character and space, non-ASCII, lone surrogates, special tokens —
 * and the same pieces from the pre-tokenizer itself. The library's mapping is the prototype's
 * method, which the patch shadows on the instance: deleting the instance's restores it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { byteLevelAscii, byteLevelPreTokenizers } from '../../src/engine/model/byte-level-ascii.ts';
import type { TokenizerModel } from '../../src/engine/model/tokenizer-model.ts';
import { loadServedModel } from '../../src/server/served-model.ts';
import { GENERATED, TINYSTORIES, VENDORED } from '../support/models.ts';

/** Each family, and how many ByteLevel pre-tokenizers its tokenizer.json declares. */
const MODELS = [
  { id: 'tiny-random-llama', byteLevel: 1 },
  { id: 'smollm2-135m-random', byteLevel: 1 },
  { id: 'tiny-random-llama3', byteLevel: 1 },
  { id: 'tiny-random-qwen2', byteLevel: 1 },
  { id: 'tiny-random-qwen3', byteLevel: 1 },
  { id: 'tiny-random-phi3', byteLevel: 0 },
  { id: 'tiny-random-gemma3', byteLevel: 0 },
].map((m) => ({ ...m, root: GENERATED })).concat([{ id: TINYSTORIES, byteLevel: 0, root: VENDORED }]);

const PIECES = [
  'the', ' customer', ' wrote', 'Question', ':', ' ', '  ', '\t', '\n', '\n\n', '\r\n', '\u000b', '\u0000', '\u001f', '\u007f', '~', '!', '"', "'s", "'ll", '.', '...', '12', '2026', '-',
  'é', 'e\u0301', '字', '日本語', '😀', '\u00a0', '\u0085', '\u2028', '\ufeff', '\u2581', '\ud800', '\udc00x', '<|im_end|>', '<|eot_id|>', '<s>', '</s>',
];
const texts = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), maxLength: 120 }),
);

/** The ByteLevel pre-tokenizers of a loaded tokenizer, as the module finds them (their count is checked against tokenizer.json below). */
function byteLevels(lm: TokenizerModel): Array<Record<string, unknown>> {
  return byteLevelPreTokenizers(lm.tokenizer) as unknown as Array<Record<string, unknown>>;
}

for (const m of MODELS) {
  describe.skipIf(!existsSync(join(m.root, m.id, 'tokenizer.json')))(`the ByteLevel ASCII path on ${m.id}`, () => {
    let fast: TokenizerModel;
    let library: TokenizerModel;
    beforeAll(async () => {
      fast = await loadServedModel(m.id, m.root);
      library = await loadServedModel(m.id, m.root);
      for (const pre of byteLevels(library)) {
        expect(Object.hasOwn(pre, 'pre_tokenize_text'), 'the loader installed the ASCII path').toBe(true);
        delete pre['pre_tokenize_text'];
      }
    });

    it(`finds the ${m.byteLevel} ByteLevel pre-tokenizer(s) its tokenizer.json declares, and installs once`, () => {
      expect(byteLevels(fast)).toHaveLength(m.byteLevel);
      expect(byteLevels(fast).every((p) => Object.hasOwn(p, 'pre_tokenize_text'))).toBe(true);
      expect(byteLevels(library).some((p) => Object.hasOwn(p, 'pre_tokenize_text'))).toBe(false);
      const before = byteLevels(fast).map((p) => p['pre_tokenize_text']);
      expect(byteLevelAscii(fast.tokenizer)).toBe(m.byteLevel);
      expect(byteLevels(fast).map((p) => p['pre_tokenize_text']), 'a second call wraps nothing again').toEqual(before);
    });

    it('gives the library\'s ids, with and without special tokens, on generated text', () => {
      fc.assert(
        fc.property(texts, fc.boolean(), (text, special) => {
          expect(fast.encode(text, special)).toEqual(library.encode(text, special));
        }),
        { numRuns: 400, seed: 20261128 },
      );
    });

    if (m.byteLevel > 0) it('gives the library\'s pieces from the pre-tokenizer itself, and its ASCII pieces as the byte table maps them', () => {
      const [fastPre] = byteLevels(fast) as Array<{ pre_tokenize_text(t: string): string[] }>;
      const [libPre] = byteLevels(library) as Array<{ pre_tokenize_text(t: string): string[] }>;
      fc.assert(
        fc.property(texts, (text) => {
          expect(fastPre!.pre_tokenize_text(text)).toEqual(libPre!.pre_tokenize_text(text));
        }),
        { numRuns: 400, seed: 7 },
      );
      // Independent of both: GPT-2's byte table (space → Ġ, newline → Ċ, printable ASCII itself).
      expect(fastPre!.pre_tokenize_text(' a\n~').join('')).toBe('ĠaĊ~');
    });
  });
}
