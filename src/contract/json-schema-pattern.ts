/**
 * The `pattern` keyword of a response schema, as far as it can be enforced while the model writes
 * a JSON string token by token (docs/structured-output.md). A pattern is read as an ECMAScript
 * regular expression (JSON Schema's dialect) and rewritten into one the grammar engine enforces
 * exactly; what it cannot enforce is refused, never dropped.
 *
 * - **Whole string.** The output matches the pattern from its first character to its last, as if
 *   it were anchored (`^…$`): every such string also matches the pattern as JSON Schema reads it
 *   (anywhere in the string). `^` and `$` may stand only at the start and end of a top-level
 *   alternative, where they are dropped.
 * - **Characters a raw JSON string can hold.** The grammar engine matches the pattern against the
 *   string's raw JSON text, without escapes: every character class is narrowed to printable ASCII
 *   other than `"` and `\` (U+0020–U+007E), plus the non-ASCII characters a class names one by
 *   one (ranges of non-ASCII characters are matched wrongly by xgrammar 0.1.27). `.` and `\S`
 *   become such a class. A class left empty by the narrowing (a pattern that needs `"`, `\`, a
 *   control character or a non-ASCII range) is refused.
 * - **Refused syntax:** lookaround, backreferences, word boundaries (`\b`, `\B`), Unicode property
 *   classes (`\p{…}`), `{,n}` quantifiers, and quantifiers above `limits.maxPatternRepeat`.
 */
import { limits } from './limits.ts';

/** A code point range, both ends included. */
type Range = readonly [number, number];

/** The printable ASCII characters a raw JSON string holds as themselves: U+0020–U+007E but `"` and `\`. */
const JSON_SAFE_ASCII: readonly Range[] = [[0x20, 0x21], [0x23, 0x5b], [0x5d, 0x7e]];

const { maxPatternRepeat } = limits;

export type PatternCheck = { ok: true; pattern: string } | { ok: false; reason: string };

/**
 * The pattern the grammar engine enforces for `source`: a regular expression whose every full
 * match is a string the raw JSON text can hold and that `source` matches; or why there is none.
 */
export function enforceablePattern(source: string): PatternCheck {
  try {
    new RegExp(source, 'u');
  } catch (e) {
    return { ok: false, reason: `it is not a valid regular expression (${(e as Error).message})` };
  }
  try {
    return { ok: true, pattern: new PatternReader(source).read() };
  } catch (e) {
    if (e instanceof Refusal) return { ok: false, reason: e.message };
    throw e;
  }
}

/**
 * Why `source` cannot be enforced for its syntax (an invalid expression, lookaround,
 * backreferences, word boundaries, `\\p{…}`, inline modifiers, `{,n}`, a count above
 * `maxPatternRepeat`), or null. The characters it needs are the grammar compiler's business
 * (engine/grammar/json-schema/): it writes `"`, `\\` and control characters escaped.
 */
export function patternSyntaxProblem(source: string): string | null {
  try {
    new RegExp(source, 'u');
  } catch (e) {
    return `it is not a valid regular expression (${(e as Error).message})`;
  }
  try {
    new PatternReader(source, true).read();
    return null;
  } catch (e) {
    if (e instanceof Refusal) return e.message;
    throw e;
  }
}

class Refusal extends Error {}

const CLASS_ESCAPES: Record<string, readonly Range[]> = {
  d: [[0x30, 0x39]],
  w: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  s: [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]],
};
const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b };
/** Line terminators: what `.` does not match. */
const LINE_TERMINATORS: readonly Range[] = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];

/** A set of characters: the ranges it holds, and whether it was written as one character (a literal). */
interface CharSet {
  ranges: Range[];
  single: boolean;
}

/** Reads a pattern (already known to be valid ECMAScript) and writes its enforceable form. */
class PatternReader {
  #i = 0;
  #depth = 0;

  constructor(private readonly src: string, private readonly syntaxOnly = false) {}

  read(): string {
    const body = this.#alternatives(true);
    return `^(?:${body})$`;
  }

  /** Alternatives up to a `)` or the end; `top`: anchors allowed at each one's ends. */
  #alternatives(top: boolean): string {
    const alts: string[] = [];
    for (;;) {
      alts.push(this.#sequence(top));
      if (this.src[this.#i] !== '|') break;
      this.#i++;
    }
    return alts.join('|');
  }

  #sequence(top: boolean): string {
    let out = '';
    const start = this.#i;
    for (;;) {
      const c = this.src[this.#i];
      if (c === undefined || c === '|' || c === ')') return out;
      if (c === '^') {
        if (!top || this.#i !== start) throw new Refusal('"^" may stand only at the start of the pattern (or of a top-level alternative)');
        this.#i++;
        continue;
      }
      if (c === '$') {
        const next = this.src[this.#i + 1];
        if (!top || (next !== undefined && next !== '|')) throw new Refusal('"$" may stand only at the end of the pattern (or of a top-level alternative)');
        this.#i++;
        continue;
      }
      let atom: string;
      if (c === '(') atom = this.#group();
      else atom = this.#print(this.#atom());
      out += atom + this.#quantifier();
    }
  }

  #group(): string {
    const rest = this.src.slice(this.#i);
    if (/^\(\?(=|!|<=|<!)/.test(rest)) throw new Refusal('lookahead and lookbehind ("(?=", "(?!", "(?<=", "(?<!") cannot be enforced');
    if (/^\(\?[^:<]/.test(rest)) throw new Refusal('inline modifiers ("(?i:") cannot be enforced');
    const named = /^\(\?<[^>]+>/.exec(rest);
    this.#i += named ? named[0].length : rest.startsWith('(?:') ? 3 : 1;
    this.#depth++;
    const body = this.#alternatives(false);
    this.#depth--;
    this.#i++; // ')'
    return `(?:${body})`;
  }

  #quantifier(): string {
    const rest = this.src.slice(this.#i);
    const m = /^(?:[*+?]|\{(\d+)(,(\d*))?\})\??/.exec(rest);
    if (!m) {
      if (rest.startsWith('{,')) throw new Refusal('a quantifier "{,n}" cannot be enforced: write "{0,n}"');
      return '';
    }
    this.#i += m[0].length;
    const text = m[0].replace(/\?$/, m[0].length > 1 ? '' : '?'); // lazy or greedy: the same strings
    for (const n of [m[1], m[3]]) {
      if (n !== undefined && n !== '' && Number(n) > maxPatternRepeat) {
        throw new Refusal(`a quantifier may repeat at most ${maxPatternRepeat} times, got ${n}`);
      }
    }
    return text;
  }

  /** One character, escape, class or `.`, as the characters it matches. */
  #atom(): CharSet {
    const c = this.src[this.#i]!;
    if (c === '[') return this.#class();
    if (c === '.') {
      this.#i++;
      return { ranges: complement(LINE_TERMINATORS), single: false };
    }
    if (c === '\\') return this.#escape(false);
    const cp = this.src.codePointAt(this.#i)!;
    this.#i += cp > 0xffff ? 2 : 1;
    return { ranges: [[cp, cp]], single: true };
  }

  #escape(inClass: boolean): CharSet {
    const c = this.src[this.#i + 1]!;
    const lower = c.toLowerCase();
    if (c === 'b' && !inClass) throw new Refusal('word boundaries ("\\b") cannot be enforced');
    if (c === 'B') throw new Refusal('word boundaries ("\\B") cannot be enforced');
    if (c === 'p' || c === 'P') throw new Refusal('Unicode property classes ("\\p{…}") cannot be enforced');
    if (/[1-9]/.test(c) || c === 'k') throw new Refusal('backreferences cannot be enforced');
    this.#i += 2;
    if (lower in CLASS_ESCAPES) {
      const ranges = CLASS_ESCAPES[lower]!;
      // Only the ASCII part of \s: its non-ASCII spaces were not named one by one.
      return { ranges: c === lower ? ranges.filter(([lo]) => lo < 0x80) : complement(ranges), single: false };
    }
    if (c in CONTROL_ESCAPES) return char(CONTROL_ESCAPES[c]!);
    if (c === 'b') return char(0x08); // in a class: backspace
    if (c === '0') return char(0);
    if (c === 'c') {
      const letter = this.src[this.#i++]!;
      return char(letter.toUpperCase().charCodeAt(0) - 64);
    }
    if (c === 'x') {
      const hex = this.src.slice(this.#i, this.#i + 2);
      this.#i += 2;
      return char(parseInt(hex, 16));
    }
    if (c === 'u') {
      if (this.src[this.#i] === '{') {
        const end = this.src.indexOf('}', this.#i);
        const cp = parseInt(this.src.slice(this.#i + 1, end), 16);
        this.#i = end + 1;
        return char(cp);
      }
      const hex = this.src.slice(this.#i, this.#i + 4);
      this.#i += 4;
      return char(parseInt(hex, 16));
    }
    // An escaped syntax character: itself.
    const cp = this.src.codePointAt(this.#i - 1)!;
    return char(cp);
  }

  #class(): CharSet {
    this.#i++; // '['
    const negated = this.src[this.#i] === '^';
    if (negated) this.#i++;
    const ranges: Range[] = [];
    while (this.src[this.#i] !== ']') {
      const lo = this.#classAtom();
      if (this.src[this.#i] === '-' && this.src[this.#i + 1] !== ']' && lo.single) {
        this.#i++;
        const hi = this.#classAtom();
        if (!hi.single) {
          // "[a-\d]": ECMAScript without /u reads the "-" literally; with /u it is a syntax error (caught above).
          throw new Refusal('a class range must end at a single character');
        }
        ranges.push([lo.ranges[0]![0], hi.ranges[0]![0]]);
        continue;
      }
      ranges.push(...lo.ranges);
    }
    this.#i++; // ']'
    return { ranges: negated ? complement(ranges) : ranges, single: false };
  }

  #classAtom(): CharSet {
    const c = this.src[this.#i]!;
    if (c === '\\') return this.#escape(true);
    const cp = this.src.codePointAt(this.#i)!;
    this.#i += cp > 0xffff ? 2 : 1;
    return { ranges: [[cp, cp]], single: true };
  }

  /** The characters of `set` a raw JSON string can hold, written for the grammar engine. */
  #print(set: CharSet): string {
    const { ascii, others } = jsonSafe(set);
    if (ascii.length === 0 && others.length === 0) {
      if (this.syntaxOnly) return '';
      throw new Refusal('it needs a character a JSON string holds only escaped (\'"\', "\\", a control character) or a range of non-ASCII characters, which cannot be enforced');
    }
    if (others.length === 0 && ascii.length === 1 && ascii[0]![0] === ascii[0]![1]) return literal(ascii[0]![0]);
    if (ascii.length === 0 && others.length === 1) return literal(others[0]!);
    const parts = ascii.map(([lo, hi]) => (lo === hi ? classChar(lo) : hi === lo + 1 ? classChar(lo) + classChar(hi) : `${classChar(lo)}-${classChar(hi)}`));
    // Non-ASCII characters one by one: xgrammar 0.1.27 matches ranges of them wrongly.
    return `[${parts.join('')}${others.map(classChar).join('')}]`;
  }
}

function char(cp: number): CharSet {
  return { ranges: [[cp, cp]], single: true };
}

/** Sorted, merged ranges. */
function normalize(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** Every code point not in `ranges`. */
function complement(ranges: readonly Range[]): Range[] {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

/** `set` narrowed to JSON-safe printable ASCII, plus the non-ASCII characters it was written with one by one. */
function jsonSafe(set: CharSet): { ascii: Range[]; others: number[] } {
  const ascii: Range[] = [];
  const others = new Set<number>();
  for (const [lo, hi] of set.ranges) {
    for (const [slo, shi] of JSON_SAFE_ASCII) {
      const a = Math.max(lo, slo);
      const b = Math.min(hi, shi);
      if (a <= b) ascii.push([a, b]);
    }
    if (lo === hi && lo > 0x7f && !(lo >= 0xd800 && lo <= 0xdfff) && lo !== 0x2028 && lo !== 0x2029) others.add(lo);
  }
  return { ascii: normalize(ascii), others: [...others].sort((a, b) => a - b) };
}

const SYNTAX = new Set('\\^$.|?*+()[]{}');

function literal(cp: number): string {
  const s = String.fromCodePoint(cp);
  return SYNTAX.has(s) ? `\\${s}` : s;
}

function classChar(cp: number): string {
  const s = String.fromCodePoint(cp);
  return s === ']' || s === '\\' || s === '^' || s === '-' || s === '[' ? `\\${s}` : s;
}
