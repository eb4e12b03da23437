import type { PreTrainedTokenizer } from '@huggingface/transformers';

/**
 * Where a tokenizer provably splits a text the same way whatever comes before and after: a *cut*.
 *
 * A cut at `i` in a text `S` (between `S[i-1]` and `S[i]`) means that transformers.js' encoding
 * of `S` (added-token split, normalizer, pre-tokenizer, BPE) is the tokens of `S[..i]` read with
 * `S[i]` as its one character of look-ahead, followed by the tokens of `S[i..]`, and that the
 * latter depend on `S[i..]` alone: not on what precedes `S[i-1]`, nor on where the section that
 * holds the cut begins. So two texts that share `S[i-1..]` have the same tokens from the cut on,
 * and two texts that share `S[..i+1]` the same tokens before it. question-plan.ts uses this to
 * check a question's whole-prompt tokenization on a short window at the end of the state instead
 * of the whole prompt (docs/decisions.md).
 *
 * Whether `i` is a cut is decided from the pair `S[i-1], S[i]` and the tokenizer's own
 * configuration (`tokenizer.json`, as transformers.js runs it), never from trying it:
 *
 * - added tokens (split first, by the longest match from the left): no added token contains the
 *   pair, ends with `S[i-1]` or starts with `S[i]`, so no added-token match spans, ends or starts at
 *   the cut (the cut is inside a section of plain text in every such text, and the section's end
 *   is never what the text before the cut sees after it), and the split's decisions left of the
 *   cut read at most `S[i]`; with any added token that strips whitespace around it, neither
 *   character is whitespace (so no stripping crosses or reaches the cut);
 * - the normalizer: character maps (`Replace` of one character), `Prepend` (which
 *   only touches a section's start, left of the cut) and Unicode forms (NFC, NFD, NFKC, NFKD: an
 *   ASCII character has canonical combining class 0, no decomposition, and is never the second
 *   character of a composition, so the form of `L + R` is the form of `L` plus the form of `R`
 *   when both characters at the cut are ASCII); anything else: no cut;
 * - the pre-tokenizer: the regular expressions of GPT-2 (`ByteLevel`), Llama 3 and Qwen 2
 *   (`Split`) are known, and for each the pairs that one match can consume in a row are listed
 *   below (their look-aheads read one character); a pair outside that list is a boundary between
 *   two pre-tokens in every text, since every character is matched and the scan restarts at the
 *   cut. `ByteLevel` without its regex maps bytes to characters, one at a time; a `Split` on one
 *   literal character that is not at the cut leaves it inside a word; anything else: no cut;
 * - the model (BPE): within a word, the cut holds if no merge (and no vocabulary entry, where
 *   `ignore_merges` takes a whole word) contains the two characters at the cut side by side: then
 *   no symbol ever spans it, and the merges on either side happen as they would alone (the merge
 *   order, rank then position, is the same on each side).
 *
 * Tokenizers outside these shapes get no cuts (`tokenCuts` returns null) and their callers
 * tokenize whole texts, as before.
 */
export interface TokenCuts {
  /** Whether `text` has a cut at `i` (1 ≤ i < text.length). */
  at(text: string, i: number): boolean;
  /**
   * Whether the tokens from a cut on are the encoding of the text from the cut on by itself
   * (`encode(text.slice(i), false)`): no normalizer that prepends to a section, no pre-tokenizer
   * that adds a space in front, and no whole-word vocabulary look-up (`ignore_merges`) where a cut
   * may sit inside a word (it would see a shorter word there).
   */
  readonly standalone: boolean;
  /** The greatest cut `i` with `from ≥ i ≥ to`, or -1. */
  lastBefore(text: string, from: number, to: number): number;
}

type Verdict = 'split' | 'unsafe' | { x: string; y: string };

interface Analysis {
  standalone: boolean;
  /** The normalizer's map of one character (null: the character cannot sit at a cut). */
  normalize: (c: string) => string | null;
  /** Whether both characters at a cut must be ASCII (a Unicode normalization form). */
  asciiOnly: boolean;
  /** The pre-tokenizer's verdict on a (normalized) pair: a pre-token boundary, no cut, or a pair inside a word (as the model sees it). */
  preTokenize: (a: string, b: string) => Verdict;
  addedTokens: string[];
  addedStrips: boolean;
  /** The model's merges (and vocabulary where whole words are looked up), for the pairs inside words. */
  bpeStrings: () => Iterable<string>;
}

const caches = new WeakMap<object, TokenCuts | null>();

/** The cuts of `tokenizer`, or null where its shape is not one this analysis covers. */
export function tokenCuts(tokenizer: PreTrainedTokenizer): TokenCuts | null {
  if (caches.has(tokenizer)) return caches.get(tokenizer)!;
  let cuts: TokenCuts | null = null;
  try {
    const analysis = analyse(tokenizer);
    if (analysis) cuts = cutsOf(analysis);
  } catch {
    cuts = null;
  }
  caches.set(tokenizer, cuts);
  return cuts;
}

/**
 * Whether `encode(text, true)` is `encode(text, false)` with tokens put before it only (so that
 * with special tokens a cut still splits the ids the same way): no post-processor, the byte-level
 * one (no change to ids), or a template whose single sequence ends with the text.
 */
export function prependsOnly(tokenizer: PreTrainedTokenizer): boolean {
  const json = (tokenizer as unknown as { _tokenizerJSON?: Record<string, unknown> })._tokenizerJSON;
  if (!json) return false;
  const ok = (p: unknown): boolean => {
    if (p === null || p === undefined) return true;
    const c = p as { type?: string; single?: Record<string, unknown>[]; processors?: unknown[] };
    if (c.type === 'ByteLevel') return true;
    if (c.type === 'Sequence') return (c.processors ?? []).every(ok);
    if (c.type === 'TemplateProcessing') {
      const single = c.single ?? [];
      const last = single[single.length - 1];
      return last !== undefined && 'Sequence' in last && single.filter((item) => 'Sequence' in item).length === 1;
    }
    return false;
  };
  return ok(json['post_processor']);
}

function cutsOf(x: Analysis): TokenCuts {
  const verdicts = new Map<string, boolean>();
  let pairs: Set<string> | null = null;
  const inBpe = (y: string): boolean => {
    if (!pairs) {
      pairs = new Set();
      for (const s of x.bpeStrings()) {
        const cps = Array.from(s);
        for (let k = 1; k < cps.length; k++) pairs.add(cps[k - 1]! + cps[k]!);
      }
    }
    return pairs.has(y);
  };
  const addedOk = (a: string, b: string): boolean => {
    if (x.addedStrips && (WS.test(a) || WS.test(b) || WHITE_SPACE.test(a) || WHITE_SPACE.test(b))) return false;
    const pair = a + b;
    for (const t of x.addedTokens) if (t.endsWith(a) || t.startsWith(b) || t.includes(pair)) return false;
    return true;
  };
  const decide = (a: string, b: string): boolean => {
    if (isSurrogate(a) || isSurrogate(b)) return false;
    if (x.asciiOnly && (a.charCodeAt(0) > 0x7f || b.charCodeAt(0) > 0x7f)) return false;
    if (!addedOk(a, b)) return false;
    const na = x.normalize(a);
    const nb = x.normalize(b);
    if (!na || !nb) return false;
    const ca = na[na.length - 1]!;
    const cb = nb[0]!;
    if (isSurrogate(ca) || isSurrogate(cb)) return false;
    if ((ca !== a || cb !== b) && !addedOk(ca, cb)) return false;
    const v = x.preTokenize(ca, cb);
    if (v === 'split') return true;
    if (v === 'unsafe') return false;
    return !inBpe(v.x + v.y);
  };
  const at = (text: string, i: number): boolean => {
    if (i < 1 || i >= text.length) return false;
    const key = text[i - 1]! + text[i]!;
    let v = verdicts.get(key);
    if (v === undefined) verdicts.set(key, (v = decide(text[i - 1]!, text[i]!)));
    return v;
  };
  return {
    at,
    standalone: x.standalone,
    lastBefore(text, from, to) {
      for (let i = Math.min(from, text.length - 1); i >= Math.max(to, 1); i--) if (at(text, i)) return i;
      return -1;
    },
  };
}

const isSurrogate = (c: string) => {
  const n = c.charCodeAt(0);
  return n >= 0xd800 && n <= 0xdfff;
};

const WS = /^\s$/u;
const WHITE_SPACE = /^\p{White_Space}$/u;
const LETTER = /^\p{L}$/u;
const NUMBER = /^\p{N}$/u;

/** GPT-2's pattern, as transformers.js' ByteLevel pre-tokenizer holds it. */
const GPT2 = String.raw`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`;
/** Llama 3's and Qwen 2's patterns, as transformers.js compiles them (`\s` written `\p{White_Space}`). */
const LLAMA3 = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+`;
const QWEN2 = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+`;

/**
 * The pairs one match of GPT-2's pattern can consume in a row: `'s`…`'d` (an apostrophe, then a
 * letter), ` ?X+` (a space before a letter, digit or other character; two of a kind), `\s+` (two
 * spaces). Its look-ahead `(?!\S)` reads one character.
 */
function gpt2Joins(a: string, b: string): boolean {
  const s = (c: string) => WS.test(c);
  const l = (c: string) => LETTER.test(c);
  const n = (c: string) => NUMBER.test(c);
  const p = (c: string) => !s(c) && !l(c) && !n(c);
  return (a === ' ' && !s(b)) || (l(a) && l(b)) || (n(a) && n(b)) || (p(a) && p(b)) || (s(a) && s(b)) || (a === "'" && l(b));
}

/**
 * The pairs one match of Llama 3's (`digitRuns`: `\p{N}{1,3}`) or Qwen 2's (`\p{N}`) pattern can
 * consume in a row: a contraction (an apostrophe, then a letter), `[^\r\n\p{L}\p{N}]?\p{L}+` (a
 * character other than a line break, letter or digit before a letter; two letters), digits in a
 * run of up to three (Llama 3), ` ?[^\s\p{L}\p{N}]+[\r\n]*` (a space before a symbol, two symbols,
 * a symbol before a line break), `\s*[\r\n]+`, `\s+` (two spaces of any kind). Its look-ahead
 * `(?!\S)` reads one character.
 */
function splitJoins(digitRuns: boolean) {
  return (a: string, b: string): boolean => {
    const w = (c: string) => WHITE_SPACE.test(c);
    const l = (c: string) => LETTER.test(c);
    const n = (c: string) => NUMBER.test(c);
    const p = (c: string) => !w(c) && !l(c) && !n(c);
    const lineBreak = (c: string) => c === '\r' || c === '\n';
    return (
      (!lineBreak(a) && !l(a) && !n(a) && l(b)) ||
      (l(a) && l(b)) ||
      (digitRuns && n(a) && n(b)) ||
      (a === ' ' && p(b)) ||
      (p(a) && p(b)) ||
      (p(a) && lineBreak(b)) ||
      (w(a) && w(b))
    );
  };
}

/** GPT-2's byte-to-character map (ByteLevel). */
const BYTE_CHARS: string[] = (() => {
  const keep = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(keep(b) ? b : 256 + n++);
  return out;
})();
const utf8 = new TextEncoder();
const byteChars = (c: string) => Array.from(utf8.encode(c), (b) => BYTE_CHARS[b]!).join('');

interface Config {
  type?: string;
  [key: string]: unknown;
}

function analyse(tokenizer: PreTrainedTokenizer): Analysis | null {
  const t = tokenizer as unknown as { _tokenizerJSON?: Config; _tokenizer?: Record<string, unknown>; encode: unknown };
  const json = t._tokenizerJSON;
  const inner = t._tokenizer;
  if (!json || !inner) return null;
  // The ids must come from the tokenizer's own pipeline, as analysed here.
  if (inner['remove_space'] === true || inner['do_lowercase_and_remove_accent']) return null;
  const model = json['model'] as Config | undefined;
  if (!model || model.type !== 'BPE' || model['dropout'] || model['end_of_word_suffix'] || model['continuing_subword_suffix'] || model['continuing_subword_prefix']) return null;
  const normalizer = normalizerOf(json['normalizer'] as Config | null);
  if (!normalizer) return null;
  const runtimePre = inner['pre_tokenizer'] as Record<string, unknown> | null;
  const preTokenize = preTokenizerOf(json['pre_tokenizer'] as Config | null, runtimePre);
  if (!preTokenize) return null;
  const addedMap = inner['added_tokens_map'] as Map<string, { lstrip?: boolean; rstrip?: boolean }> | undefined;
  if (!(addedMap instanceof Map)) return null;
  const addedTokens = [...addedMap.keys()];
  const addedStrips = [...addedMap.values()].some((a) => a.lstrip || a.rstrip);
  const merges = (model['merges'] ?? []) as (string | string[])[];
  const vocab = (model['vocab'] ?? {}) as Record<string, number>;
  const ignoreMerges = model['ignore_merges'] === true;
  const types = (c: unknown): Config[] => {
    if (!c || typeof c !== 'object') return [];
    const o = c as Config;
    return [o, ...((o['normalizers'] ?? o['pretokenizers'] ?? []) as Config[]).flatMap(types)];
  };
  const pre = types(json['pre_tokenizer']);
  // A word boundary at every cut: GPT-2's or a known Split pattern decides every pair.
  const splitsEveryCut = pre.some((c) => (c.type === 'ByteLevel' && c['use_regex'] !== false) || (c.type === 'Split' && (c['pattern'] as { Regex?: string } | undefined)?.Regex !== undefined));
  const standalone =
    !types(json['normalizer']).some((c) => c.type === 'Prepend') && !pre.some((c) => c.type === 'ByteLevel' && c['add_prefix_space'] === true) && !(ignoreMerges && !splitsEveryCut);
  return {
    ...normalizer,
    standalone,
    preTokenize,
    addedTokens,
    addedStrips,
    *bpeStrings() {
      // As transformers.js reads them: a pair, or the first two words of "x y".
      for (const m of merges) yield (Array.isArray(m) ? m : m.split(' ', 2)).join('');
      if (ignoreMerges) yield* Object.keys(vocab);
    },
  };
}

function normalizerOf(config: Config | null): Pick<Analysis, 'normalize' | 'asciiOnly'> | null {
  if (config === null || config === undefined) return { normalize: (c) => c, asciiOnly: false };
  switch (config.type) {
    case 'NFC':
    case 'NFD':
    case 'NFKC':
    case 'NFKD':
      return { normalize: (c) => (c.charCodeAt(0) <= 0x7f ? c : null), asciiOnly: true };
    case 'Prepend':
      return { normalize: (c) => c, asciiOnly: false };
    case 'Replace': {
      const pattern = config['pattern'] as { String?: string } | undefined;
      const from = pattern?.String;
      const to = String(config['content'] ?? '');
      if (typeof from !== 'string' || from.length !== 1) return null;
      return { normalize: (c) => (c === from ? to : c), asciiOnly: false };
    }
    case 'Sequence': {
      const parts = ((config['normalizers'] ?? []) as Config[]).map(normalizerOf);
      if (parts.some((p) => p === null)) return null;
      return {
        normalize: (c) => {
          let s: string | null = c;
          for (const p of parts as Pick<Analysis, 'normalize'>[]) {
            if (s === null) return null;
            let out = '';
            for (const ch of s) {
              const m = p.normalize(ch);
              if (m === null) return null;
              out += m;
            }
            s = out;
          }
          return s;
        },
        asciiOnly: (parts as Pick<Analysis, 'asciiOnly'>[]).some((p) => p.asciiOnly),
      };
    }
    default:
      return null;
  }
}

/** The pre-tokenizer's verdict on a pair, from its configuration and the regular expression transformers.js runs. */
function preTokenizerOf(config: Config | null, runtime: Record<string, unknown> | null): Analysis['preTokenize'] | null {
  if (config === null || config === undefined) return (x, y) => ({ x, y });
  const source = (runtime?.['pattern'] as RegExp | undefined)?.source;
  switch (config.type) {
    case 'ByteLevel': {
      if (config['use_regex'] === false) return (a, b) => ({ x: byteChars(a).slice(-1), y: byteChars(b)[0]! });
      if (source !== GPT2) return null;
      return (a, b) => (gpt2Joins(a, b) ? 'unsafe' : 'split');
    }
    case 'Split': {
      if (config['invert'] !== false) return null;
      const pattern = config['pattern'] as { String?: string; Regex?: string } | undefined;
      if (typeof pattern?.String === 'string') {
        const s = pattern.String;
        if (s.length !== 1) return null;
        return (a, b) => (a === s || b === s ? 'unsafe' : { x: a, y: b });
      }
      if (config['behavior'] !== 'Isolated') return null;
      const joins = source === LLAMA3 ? splitJoins(true) : source === QWEN2 ? splitJoins(false) : null;
      if (!joins) return null;
      return (a, b) => (joins(a, b) ? 'unsafe' : 'split');
    }
    case 'Sequence': {
      const configs = (config['pretokenizers'] ?? []) as Config[];
      const runtimes = (runtime?.['tokenizers'] ?? []) as Record<string, unknown>[];
      if (runtimes.length !== configs.length) return null;
      const parts = configs.map((c, i) => preTokenizerOf(c, runtimes[i] ?? null));
      if (parts.some((p) => p === null)) return null;
      return (a, b) => {
        let x = a;
        let y = b;
        for (const p of parts as Analysis['preTokenize'][]) {
          const v = p(x, y);
          if (v === 'split' || v === 'unsafe') return v;
          x = v.x;
          y = v.y;
        }
        return { x, y };
      };
    }
    default:
      return null;
  }
}
