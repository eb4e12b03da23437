/**
 * A token's bytes as the tokenizer's decoder writes them, from its raw text (token-vocabulary.ts):
 * GPT-2's byte-to-character map for byte-level vocabularies (an added token written as text: its
 * UTF-8), `<0xNN>` for a byte-fallback vocabulary's byte tokens, and otherwise the text with `▁`
 * read as a space, in UTF-8. The extraction's token table (extraction/token-bytes.ts) and the
 * matcher's length guards (length-guard-tracker.ts) read tokens with it.
 */
import { BYTE_OF_CHAR } from './byte-level.ts';
import { BYTE_TOKEN, type TokenVocabulary } from './token-vocabulary.ts';

const encoder = new TextEncoder();

/** A token's bytes from its raw text (a special token or a hole, "": none). */
export function rawTokenBytes(text: string, vocabType: TokenVocabulary['vocabType']): Uint8Array {
  if (text === '') return new Uint8Array(0);
  if (vocabType === 'byte_level') {
    const out = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      const byte = code < BYTE_OF_CHAR.length ? BYTE_OF_CHAR[code]! : -1;
      if (byte < 0) return encoder.encode(text); // an added token written as text
      out[i] = byte;
    }
    return out;
  }
  if (vocabType === 'byte_fallback') {
    const byte = BYTE_TOKEN.exec(text);
    if (byte) return Uint8Array.of(parseInt(byte[1]!, 16));
  }
  return encoder.encode(text.replaceAll('▁', ' '));
}
