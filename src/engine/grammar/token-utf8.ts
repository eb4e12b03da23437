/**
 * Well-formed UTF-8 across tokens: which tokens may come next so that the reply's bytes stay
 * well-formed UTF-8, given where the bytes so far end (between characters, or inside one).
 *
 * Why: xgrammar 0.1.27 reads a token's bytes with a lenient UTF-8 decoder. Inside a JSON string it
 * lets through sequences no UTF-8 decoder accepts: overlong forms (C0 BF, C1 BF, E0 80 80), UTF-16
 * surrogates (ED A0 80), code points past U+10FFFF (F4 90 80 80) and bytes that never occur in
 * UTF-8 (F5–FF as a lead). It counts such a sequence as one character, where the text decoder
 * writes one U+FFFD per bad byte: a reply then breaks its schema's `maxLength` and carries U+FFFD
 * it never chose (seen in Chromium: `"name": "') هناك��"` under `maxLength: 8`).
 *
 * The rule is Unicode's table of well-formed byte sequences (Unicode 15, §3.9, Table 3-7), as a
 * machine of eight states: 0 between characters; 1–3 awaiting that many continuation bytes
 * (80–BF); 4 after E0 (next A0–BF), 5 after ED (next 80–9F), 6 after F0 (next 90–BF), 7 after F4
 * (next 80–8F). A token is allowed from a state when its bytes, fed from there, never leave the
 * table. A token with no bytes (a special token, a stop token, a hole) is allowed only between
 * characters: a reply never ends inside one.
 *
 * A token's bytes are read from its raw text as the tokenizer's decoder would write them
 * (token-vocabulary.ts): GPT-2's byte-to-character map for `byte_level`, `<0xNN>` tokens for
 * `byte_fallback`; any other character is a whole code point, so well-formed by itself.
 */
import { BYTE_TOKEN, type TokenVocabulary, type VocabType } from './token-vocabulary.ts';
import { BYTE_OF_CHAR } from './byte-level.ts';

/** Between characters: where a reply starts, and where it may end. */
export const UTF8_BOUNDARY = 0;
/** Not well-formed: no continuation is. */
export const UTF8_INVALID = -1;
const STATES = 8;

const continuation = (byte: number) => byte >= 0x80 && byte <= 0xbf;

/** The state after `byte` from `state` (UTF8_INVALID once the bytes leave Unicode's table). */
export function utf8Step(state: number, byte: number): number {
  switch (state) {
    case 0:
      if (byte < 0x80) return 0;
      if (byte >= 0xc2 && byte <= 0xdf) return 1;
      if (byte === 0xe0) return 4;
      if (byte === 0xed) return 5;
      if (byte >= 0xe1 && byte <= 0xef) return 2;
      if (byte === 0xf0) return 6;
      if (byte >= 0xf1 && byte <= 0xf3) return 3;
      if (byte === 0xf4) return 7;
      return UTF8_INVALID;
    case 1:
      return continuation(byte) ? 0 : UTF8_INVALID;
    case 2:
      return continuation(byte) ? 1 : UTF8_INVALID;
    case 3:
      return continuation(byte) ? 2 : UTF8_INVALID;
    case 4:
      return byte >= 0xa0 && byte <= 0xbf ? 1 : UTF8_INVALID;
    case 5:
      return byte >= 0x80 && byte <= 0x9f ? 1 : UTF8_INVALID;
    case 6:
      return byte >= 0x90 && byte <= 0xbf ? 2 : UTF8_INVALID;
    case 7:
      return byte >= 0x80 && byte <= 0x8f ? 2 : UTF8_INVALID;
    default:
      return UTF8_INVALID;
  }
}

/** The state after a token's raw text from `state`, reading its bytes as `vocabType`'s decoder writes them. */
export function utf8AfterToken(state: number, text: string, vocabType: VocabType): number {
  if (text.length === 0) return state === UTF8_BOUNDARY ? state : UTF8_INVALID;
  if (vocabType === 'byte_fallback') {
    const byte = BYTE_TOKEN.exec(text);
    if (byte) return utf8Step(state, parseInt(byte[1]!, 16));
  }
  for (let i = 0; i < text.length && state !== UTF8_INVALID; i++) {
    const code = text.charCodeAt(i);
    const byte = vocabType === 'byte_level' && code < BYTE_OF_CHAR.length ? BYTE_OF_CHAR[code]! : -1;
    if (byte >= 0) state = utf8Step(state, byte);
    // A whole code point (a surrogate pair's second half is skipped with it): well-formed, but only between characters.
    else if (state !== UTF8_BOUNDARY) state = UTF8_INVALID;
    else if (code >= 0xd800 && code <= 0xdbff) i++;
  }
  return state;
}

/** Per vocabulary: for each state, the bitmask of tokens allowed from it, built the first time that state is reached. */
export class TokenUtf8 {
  readonly #masks: (Int32Array | undefined)[] = new Array<Int32Array | undefined>(STATES);
  constructor(private readonly vocab: TokenVocabulary) {}

  /** Tokens allowed from `state`, as a bitmask of ceil(width / 32) words (bit set: allowed). */
  mask(state: number): Int32Array {
    let mask = this.#masks[state];
    if (!mask) {
      const { encoded, vocabType, width } = this.vocab;
      mask = new Int32Array(Math.ceil(width / 32));
      for (let id = 0; id < width; id++) {
        if (utf8AfterToken(state, encoded[id] ?? '', vocabType) !== UTF8_INVALID) mask[id >> 5] = mask[id >> 5]! | (1 << (id & 31));
      }
      this.#masks[state] = mask;
    }
    return mask;
  }

  /** The state after `token` from `state`. */
  after(state: number, token: number): number {
    return utf8AfterToken(state, this.vocab.encoded[token] ?? '', this.vocab.vocabType);
  }
}

const tables = new WeakMap<TokenVocabulary, TokenUtf8>();

/** The vocabulary's table (one per vocabulary, kept while the vocabulary is). */
export function tokenUtf8(vocab: TokenVocabulary): TokenUtf8 {
  let table = tables.get(vocab);
  if (!table) tables.set(vocab, (table = new TokenUtf8(vocab)));
  return table;
}
