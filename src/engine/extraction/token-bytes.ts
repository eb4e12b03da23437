/**
 * Every token's bytes as the tokenizer's decoder writes them, sorted, for walking the whole
 * vocabulary under a byte automaton (token-mask.ts). Built once per model and kept with it.
 *
 * - Byte-level vocabularies (GPT-2's map): each character stands for one byte.
 * - Byte-fallback vocabularies: `<0xNN>` is that byte; other tokens are their text with `▁` read
 *   as a space, in UTF-8.
 * - Other vocabularies: their text with `▁` read as a space, in UTF-8.
 * - Special tokens and holes (grammar/token-vocabulary.ts blanks them) have no bytes: they are
 *   never part of a value (stop tokens end one, token-mask.ts).
 *
 * `order` lists the token ids by their bytes (lexicographic), and `lcp[i]` is the length of the
 * common prefix of the bytes of `order[i]` and `order[i - 1]`: a walk meets each distinct token
 * prefix once and skips every token that shares a dead one.
 */
import type { LanguageModel } from '../model/language-model.ts';
import { tokenVocabulary, type TokenVocabulary } from '../grammar/token-vocabulary.ts';
import { stopTokenIds } from '../chat/stop-tokens.ts';
import { rawTokenBytes } from '../grammar/token-raw-bytes.ts';

export interface TokenBytes {
  /** The model's logits width. */
  readonly width: number;
  /** Token ids in the lexicographic order of their bytes (tokens with no bytes left out). */
  readonly order: Int32Array;
  /** Common-prefix length with the previous entry of `order` (0 for the first). */
  readonly lcp: Int32Array;
  /** All bytes; token `id`'s are `data[start[id] .. start[id] + length[id])`. */
  readonly data: Uint8Array;
  readonly start: Int32Array;
  readonly length: Int32Array;
  /** Tokens that end a value: the model's stop tokens, and tokens whose bytes are a newline. */
  readonly endTokens: readonly number[];
}

const tables = new WeakMap<LanguageModel, TokenBytes>();

export function tokenBytes(lm: LanguageModel): TokenBytes {
  let table = tables.get(lm);
  if (!table) tables.set(lm, (table = buildTokenBytes(tokenVocabulary(lm, stopTokenIds(lm)))));
  return table;
}

export function buildTokenBytes(vocab: TokenVocabulary): TokenBytes {
  const { width } = vocab;
  const pieces: (Uint8Array | null)[] = [];
  let total = 0;
  for (let id = 0; id < width; id++) {
    const b = rawTokenBytes(vocab.encoded[id] ?? '', vocab.vocabType);
    pieces.push(b);
    total += b?.length ?? 0;
  }
  const data = new Uint8Array(total);
  const start = new Int32Array(width);
  const length = new Int32Array(width);
  let at = 0;
  const ids: number[] = [];
  for (let id = 0; id < width; id++) {
    const b = pieces[id]!;
    start[id] = at;
    length[id] = b?.length ?? 0;
    if (b && b.length > 0) {
      data.set(b, at);
      at += b.length;
      ids.push(id);
    }
  }
  const compare = (a: number, b: number): number => {
    const la = length[a]!;
    const lb = length[b]!;
    const sa = start[a]!;
    const sb = start[b]!;
    const n = Math.min(la, lb);
    for (let i = 0; i < n; i++) {
      const d = data[sa + i]! - data[sb + i]!;
      if (d !== 0) return d;
    }
    return la - lb || a - b;
  };
  ids.sort(compare);
  const order = Int32Array.from(ids);
  const lcp = new Int32Array(order.length);
  for (let i = 1; i < order.length; i++) {
    const a = order[i - 1]!;
    const b = order[i]!;
    const n = Math.min(length[a]!, length[b]!);
    let k = 0;
    while (k < n && data[start[a]! + k] === data[start[b]! + k]) k++;
    lcp[i] = k;
  }
  const end = new Set(vocab.stopTokenIds);
  for (let id = 0; id < width; id++) if (length[id] === 1 && data[start[id]!] === 0x0a) end.add(id);
  return { width, order, lcp, data, start, length, endTokens: [...end].sort((a, b) => a - b) };
}

/** A token's bytes (a view). */
export function bytesOf(table: TokenBytes, id: number): Uint8Array {
  return table.data.subarray(table.start[id]!, table.start[id]! + table.length[id]!);
}
