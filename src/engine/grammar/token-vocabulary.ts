/**
 * A model's vocabulary as a grammar engine reads it, built once per loaded model: every token's
 * raw text (before the tokenizer's decoder: "Ġhello", "▁hello", "<0x0A>"), how the decoder turns
 * it into bytes, the model's logits width, its stop tokens, and which tokens may never appear in
 * JSON text.
 *
 * - Special tokens (`<|im_start|>`, `<|eot_id|>`, …) are blanked to "": a grammar engine reads a
 *   token's text literally, and would otherwise allow `<|im_start|>` inside a JSON string.
 * - `jsonSafe`: tokens that hold a control character (U+0000–U+001F) are ruled out. JSON text never
 *   holds one raw, and xgrammar 0.1.27 lets them into strings with length bounds or a pattern; the
 *   output is written on one line (docs/structured-output.md), so no token with a newline is needed.
 */
import type { LanguageModel } from '../model/language-model.ts';

export type VocabType = 'byte_level' | 'byte_fallback' | 'raw';

export interface TokenVocabulary {
  /** The model this vocabulary belongs to (its id and format), for cache keys. */
  readonly key: string;
  /** Raw token text by id, `width` entries; special tokens and holes are "". */
  readonly encoded: readonly string[];
  readonly vocabType: VocabType;
  /** SentencePiece's "add dummy prefix": the tokenizer writes "▁" before the text. */
  readonly prependSpace: boolean;
  /** The model's logits width (config.json's vocab_size; may exceed the tokenizer's vocabulary). */
  readonly width: number;
  readonly stopTokenIds: readonly number[];
  /** Bitmask of the tokens JSON text may hold: not a control character among their bytes. */
  readonly jsonSafe: Int32Array;
}

interface TokenizerInternals {
  _tokenizer?: { model?: { vocab?: unknown } };
  _tokenizerJSON?: { decoder?: unknown; normalizer?: unknown; pre_tokenizer?: unknown };
  all_special_ids?: number[];
}

/** The vocabulary of `lm`, with its stop tokens (chat/'s `stopTokenIds`). */
export function tokenVocabulary(lm: LanguageModel, stopTokenIds: Iterable<number>): TokenVocabulary {
  const tok = lm.tokenizer as unknown as TokenizerInternals;
  const vocab = tok._tokenizer?.model?.vocab;
  if (!Array.isArray(vocab)) throw new Error(`the tokenizer of ${lm.id} does not list its vocabulary`);
  const width = lm.vocabSize > 0 ? lm.vocabSize : vocab.length;
  const encoded = Array.from({ length: width }, (_, i) => (typeof vocab[i] === 'string' ? (vocab[i] as string) : ''));
  for (const id of tok.all_special_ids ?? []) if (id < width) encoded[id] = '';
  const json = tok._tokenizerJSON ?? {};
  const vocabType = vocabTypeOf(json.decoder);
  return {
    key: `${lm.id}\u0000${lm.dtype}`,
    encoded,
    vocabType,
    prependSpace: prependsSpace(json.normalizer, json.pre_tokenizer),
    width,
    stopTokenIds: [...new Set(stopTokenIds)].filter((id) => id < width).sort((a, b) => a - b),
    jsonSafe: jsonSafeMask(encoded, vocabType, width),
  };
}

/** As xgrammar's own reading of a Hugging Face tokenizer: from the decoder's steps. */
export function vocabTypeOf(decoder: unknown): VocabType {
  const text = JSON.stringify(decoder ?? {});
  if (text.includes('"ByteLevel"')) return 'byte_level';
  if (text.includes('"ByteFallback"')) return 'byte_fallback';
  return 'raw';
}

/** A normalizer that prepends "▁", or a Metaspace pre-tokenizer that adds a prefix space. */
export function prependsSpace(normalizer: unknown, preTokenizer: unknown): boolean {
  const prepends = (n: unknown): boolean => {
    if (!n || typeof n !== 'object') return false;
    const o = n as { type?: string; prepend?: string; normalizers?: unknown[] };
    return (o.type === 'Prepend' && o.prepend === '▁') || (Array.isArray(o.normalizers) && o.normalizers.some(prepends));
  };
  const metaspace = (p: unknown): boolean => {
    if (!p || typeof p !== 'object') return false;
    const o = p as { type?: string; prepend_scheme?: string; add_prefix_space?: boolean; pretokenizers?: unknown[] };
    if (o.type === 'Metaspace') return o.prepend_scheme ? o.prepend_scheme !== 'never' : o.add_prefix_space !== false;
    return Array.isArray(o.pretokenizers) && o.pretokenizers.some(metaspace);
  };
  return prepends(normalizer) || metaspace(preTokenizer);
}

/** GPT-2's byte-to-character map sends bytes 0x00–0x1F to U+0100–U+011F. */
const BYTE_LEVEL_CONTROL = /[\u0100-\u011f]/;
const CONTROL = /[\u0000-\u001f]/;
/** A byte-fallback vocabulary's byte token: `<0xNN>`. */
export const BYTE_TOKEN = /^<0x([0-9A-Fa-f]{2})>$/;

function jsonSafeMask(encoded: readonly string[], vocabType: VocabType, width: number): Int32Array {
  const mask = new Int32Array(Math.ceil(width / 32)).fill(-1);
  for (let id = 0; id < encoded.length; id++) {
    const t = encoded[id]!;
    let control: boolean;
    if (vocabType === 'byte_level') control = BYTE_LEVEL_CONTROL.test(t);
    else {
      const byte = vocabType === 'byte_fallback' ? BYTE_TOKEN.exec(t) : null;
      control = byte ? parseInt(byte[1]!, 16) < 0x20 : CONTROL.test(t);
    }
    if (control) mask[id >> 5] = mask[id >> 5]! & ~(1 << (id & 31));
  }
  return mask;
}
