import type { PreTrainedTokenizer } from '@huggingface/transformers';

/**
 * transformers.js' ByteLevel pre-tokenizer (GPT-2's, used by Llama 3, Qwen, SmolLM…) turns each
 * piece of text into its bytes' characters through a TextEncoder, an array per piece and a join.
 * That was half of the time of tokenizing a decision's state (0.29 of 0.65 ms for a 433-token
 * state, `npm run bench -- --only serve`, docs/scale-out.md). Here an ASCII piece — nearly every
 * piece of English text — gets the same characters from the byte table directly (printable ASCII
 * maps to itself), and any other piece goes through the library's own mapping. The pieces, and so
 * the ids, are the library's exactly: test/engine/byte-level-ascii.test.ts holds the two equal on
 * generated text for every tokenizer the project ships.
 */

/** The fields of transformers.js' ByteLevel pre-tokenizer this reads (duck-typed: the web build's class names are not kept). */
export interface ByteLevelLike {
  add_prefix_space: boolean;
  use_regex: boolean;
  pattern: RegExp;
  byte_encoder: Record<number, string>;
  text_encoder: TextEncoder;
  pre_tokenize_text(text: string, options?: unknown): string[];
}

const PATCHED = Symbol('jev.byteLevelAscii');

function isByteLevel(x: unknown): x is ByteLevelLike {
  if (!x || typeof x !== 'function' && typeof x !== 'object') return false;
  const o = x as Partial<ByteLevelLike>;
  return typeof o.pre_tokenize_text === 'function' && o.pattern instanceof RegExp && typeof o.byte_encoder === 'object' && o.byte_encoder !== null && typeof o.use_regex === 'boolean' && typeof o.add_prefix_space === 'boolean' && o.text_encoder instanceof TextEncoder;
}

/**
 * The ByteLevel pre-tokenizers of `tokenizer`, alone or inside a Sequence, in pipeline order.
 * transformers.js 4 keeps the pipeline in `_tokenizer` (@huggingface/tokenizers); earlier versions on the tokenizer itself.
 */
export function byteLevelPreTokenizers(tokenizer: PreTrainedTokenizer): ByteLevelLike[] {
  const found: ByteLevelLike[] = [];
  const visit = (pre: unknown): void => {
    if (!pre) return;
    if (isByteLevel(pre)) {
      found.push(pre);
      return;
    }
    const inner = (pre as { tokenizers?: unknown }).tokenizers;
    if (Array.isArray(inner)) inner.forEach(visit);
  };
  const t = tokenizer as unknown as { pre_tokenizer?: unknown; _tokenizer?: { pre_tokenizer?: unknown } };
  visit(t._tokenizer?.pre_tokenizer ?? t.pre_tokenizer);
  return found;
}

/** Every ByteLevel pre-tokenizer in `tokenizer` gets the ASCII path, once. Returns how many there are. */
export function byteLevelAscii(tokenizer: PreTrainedTokenizer): number {
  const found = byteLevelPreTokenizers(tokenizer);
  for (const pre of found) if (!(pre as unknown as Record<symbol, boolean>)[PATCHED]) install(pre);
  return found.length;
}

function install(pre: ByteLevelLike): void {
  const table = Array.from({ length: 128 }, (_, b) => pre.byte_encoder[b]!);
  const bytes = (piece: string) => Array.from(pre.text_encoder.encode(piece), (b) => pre.byte_encoder[b]).join('');
  const mapPiece = (piece: string): string => {
    // Printable ASCII (33–126) is its own byte character: most pieces come back as they are.
    let identity = true;
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (c >= 128) return bytes(piece);
      if (c < 33 || c > 126) identity = false;
    }
    if (identity) return piece;
    let out = '';
    for (let i = 0; i < piece.length; i++) out += table[piece.charCodeAt(i)];
    return out;
  };
  // The library's pre_tokenize_text, with the mapping above (see its ByteLevel class).
  pre.pre_tokenize_text = function (text: string): string[] {
    if (this.add_prefix_space && !text.startsWith(' ')) text = ` ${text}`;
    const pieces = this.use_regex ? (text.match(this.pattern) ?? []) : [text];
    return pieces.map(mapPiece);
  };
  Object.defineProperty(pre, PATCHED, { value: true });
}
