/**
 * A deterministic byte-level BPE tokenizer (GPT-2 / SmolLM2 style) with exactly `vocabSize` ids:
 *
 *   ids 0..2     added special tokens <|endoftext|>, <|im_start|>, <|im_end|>
 *   ids 3..258   the 256 byte-level symbols (GPT-2 bytes_to_unicode order)
 *   ids 259..    one token per merge, in merge order:
 *                  1. BPE training on the embedded English corpus (pairs seen at least twice),
 *                  2. merges that make each REQUIRED_WORDS variant a single token,
 *                  3. synthetic merges (seeded) of word-like tokens until the vocabulary is full.
 *
 * Every byte is in the vocabulary and merges only concatenate, so any UTF-8 text round-trips:
 * decode(encode(s)) === s.
 */
import { REQUIRED_WORDS, TRAINING_CORPUS } from './corpus.ts';
import { rngFor } from './prng.ts';

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;
export const ENDOFTEXT_ID = 0;
export const IM_START_ID = 1;
export const IM_END_ID = 2;

/** GPT-2's pre-tokenization pattern (what the ByteLevel pre-tokenizer with use_regex applies). */
const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2 bytes_to_unicode: bytes in table order, and the printable character of each byte. */
function byteTable(): { order: number[]; charOf: string[] } {
  const order: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) order.push(b);
  for (let b = 0xa1; b <= 0xac; b++) order.push(b);
  for (let b = 0xae; b <= 0xff; b++) order.push(b);
  const codes = order.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!order.includes(b)) {
      order.push(b);
      codes.push(256 + n++);
    }
  }
  const charOf: string[] = new Array(256);
  order.forEach((b, i) => (charOf[b] = String.fromCharCode(codes[i] as number)));
  return { order, charOf };
}

const BYTES = byteTable();
const utf8 = new TextEncoder();

/** Maps text to its byte-level string (each UTF-8 byte → one printable character). */
export function toByteLevel(text: string): string {
  let s = '';
  for (const b of utf8.encode(text)) s += BYTES.charOf[b];
  return s;
}

export interface BpeModel {
  /** id → token string (byte-level characters, or a special token). Length = vocab size. */
  readonly vocab: readonly string[];
  /** merges in rank order. */
  readonly merges: readonly (readonly [string, string])[];
  /** How many merges came from corpus training, required words, synthetic filling. */
  readonly stats: { readonly trained: number; readonly required: number; readonly synthetic: number };
}

/** Plain BPE on a symbol list with a rank table (lowest rank merges first, leftmost on ties). */
function applyMerges(symbols: string[], ranks: Map<string, number>): string[] {
  const s = symbols.slice();
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < s.length; i++) {
      const r = ranks.get(`${s[i]} ${s[i + 1]}`);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) return s;
    s.splice(best, 2, `${s[best]}${s[best + 1]}`);
  }
}

/** Corpus BPE training: up to `limit` merges, each the most frequent pair (ties: smallest key). */
function trainOnCorpus(limit: number): [string, string][] {
  const counts = new Map<string, number>();
  for (const m of TRAINING_CORPUS.matchAll(PRETOKENIZE)) {
    const w = toByteLevel(m[0]);
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const words = [...counts.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([w, c]) => ({ symbols: Array.from(w), count: c }));
  const known = new Set(BYTES.charOf);
  const merges: [string, string][] = [];
  while (merges.length < limit) {
    const pairs = new Map<string, number>();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + count);
      }
    }
    let bestKey = '';
    let bestCount = 1;
    for (const [key, c] of pairs) {
      if (c < bestCount || (c === bestCount && (c < 2 || key > bestKey))) continue;
      // a different pair may already have produced the same string (e.g. "a"+"bc" vs "ab"+"c")
      if (known.has(key.replace(' ', ''))) continue;
      bestKey = key;
      bestCount = c;
    }
    if (bestCount < 2) break;
    const [a, b] = bestKey.split(' ') as [string, string];
    merges.push([a, b]);
    known.add(a + b);
    for (const w of words) {
      const s = w.symbols;
      for (let i = 0; i + 1 < s.length; i++) {
        if (s[i] === a && s[i + 1] === b) s.splice(i, 2, a + b);
      }
    }
  }
  return merges;
}

/** The byte-level forms of REQUIRED_WORDS that must be single tokens. */
function requiredVariants(): string[] {
  const out = new Set<string>();
  for (const w of REQUIRED_WORDS) {
    const cap = w.charAt(0).toUpperCase() + w.slice(1);
    for (const v of [w, ` ${w}`, cap, ` ${cap}`]) out.add(toByteLevel(v));
  }
  return [...out];
}

/** Merges (appended after `base`) that turn every required variant into one token. */
function requiredMerges(base: readonly (readonly [string, string])[]): [string, string][] {
  const ranks = new Map<string, number>();
  base.forEach(([a, b], i) => ranks.set(`${a} ${b}`, i));
  const extra: [string, string][] = [];
  for (const word of requiredVariants()) {
    let pieces = applyMerges(Array.from(word), ranks);
    while (pieces.length > 1) {
      const [a, b] = pieces as [string, string, ...string[]];
      const key = `${a} ${b}`;
      if (!ranks.has(key)) {
        ranks.set(key, base.length + extra.length);
        extra.push([a, b]);
      }
      pieces = applyMerges(pieces, ranks);
    }
  }
  return extra;
}

/** Trains the tokenizer model for a vocabulary of exactly `vocabSize` ids. */
export function buildBpeModel(vocabSize: number, seed: number): BpeModel {
  const base = SPECIAL_TOKENS.length + 256;
  const totalMerges = vocabSize - base;
  if (totalMerges < 0) throw new Error(`vocab size ${vocabSize} < ${base}`);

  const trained = trainOnCorpus(totalMerges);
  const baseVocab: string[] = [...SPECIAL_TOKENS, ...BYTES.order.map((b) => BYTES.charOf[b] as string)];
  /** Tokens that `required` adds on top of the first `t` trained merges. */
  const newTokens = (t: number, required: readonly (readonly [string, string])[]): number => {
    const known = new Set(baseVocab);
    for (const [a, b] of trained.slice(0, t)) known.add(a + b);
    let n = 0;
    for (const [a, b] of required) if (!known.has(a + b)) known.add(a + b), n++;
    return n;
  };
  // keep as many trained merges as leave room for the required-word merges
  let t = trained.length;
  let required = requiredMerges(trained.slice(0, t));
  while (t + newTokens(t, required) > totalMerges) {
    t--;
    if (t < 0) throw new Error(`vocab size ${vocabSize} cannot hold the required words`);
    required = requiredMerges(trained.slice(0, t));
  }

  const vocab = baseVocab.slice();
  const known = new Set(vocab);
  const merges: [string, string][] = [];
  const addMerge = (a: string, b: string): boolean => {
    merges.push([a, b]);
    if (known.has(a + b)) return false; // another merge already produced this string
    known.add(a + b);
    vocab.push(a + b);
    return true;
  };
  for (const [a, b] of trained.slice(0, t)) addMerge(a, b);
  for (const [a, b] of required) addMerge(a, b);

  // synthetic fill: word-like left + lowercase continuation, biased towards earlier (frequent) tokens
  const rng = rngFor(seed, 'tokenizer.synthetic_merges');
  const isLeft = (tok: string) => /^Ġ?[A-Za-z]+$/.test(tok);
  const isRight = (tok: string) => /^[a-z]+$/.test(tok);
  const left = vocab.filter(isLeft);
  const right = vocab.filter(isRight);
  let synthetic = 0;
  let attempts = 0;
  while (vocab.length < vocabSize) {
    if (++attempts > 100 * vocabSize) throw new Error('synthetic merge generation did not converge');
    const u = rng.nextFloat();
    const a = left[Math.floor(left.length * u * u)] as string;
    const w = rng.nextFloat();
    const b = right[Math.floor(right.length * w * w)] as string;
    const tok = a + b;
    if (tok.length > 12 || known.has(tok)) continue;
    addMerge(a, b);
    left.push(tok);
    if (isRight(tok)) right.push(tok);
    synthetic++;
  }
  return { vocab, merges, stats: { trained: t, required: required.length, synthetic } };
}

/** Encodes `text` (no special-token handling) with the model, like transformers.js would. */
export function encodeBpe(model: BpeModel, text: string): number[] {
  const ranks = new Map<string, number>();
  model.merges.forEach(([a, b], i) => ranks.set(`${a} ${b}`, i));
  const ids = new Map<string, number>();
  model.vocab.forEach((t, i) => ids.set(t, i));
  const out: number[] = [];
  for (const m of text.matchAll(PRETOKENIZE)) {
    for (const piece of applyMerges(Array.from(toByteLevel(m[0])), ranks)) out.push(ids.get(piece) as number);
  }
  return out;
}

function addedToken(id: number, content: string) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
}

/**
 * tokenizer.json text. The vocab object is written by hand so that it lists ids in ascending
 * order (JSON.stringify would move integer-like keys such as "1" to the front).
 */
export function tokenizerJson(model: BpeModel): string {
  const skeleton = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((t, i) => addedToken(i, t)),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: '@@VOCAB@@',
      merges: model.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  const vocab = `{\n${model.vocab.map((t, i) => `      ${JSON.stringify(t)}: ${i}`).join(',\n')}\n    }`;
  return `${JSON.stringify(skeleton, null, 2).replace('"@@VOCAB@@"', vocab)}\n`;
}
