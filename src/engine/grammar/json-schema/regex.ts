/**
 * Regular expressions as the schema compiler reads them: a small AST over sets of code points
 * (the decoded characters of a JSON string, not its raw text), parsed from a JSON-Schema
 * `pattern` (ECMAScript syntax, read with the `u` flag as ajv does) or built by the compiler
 * itself (numbers, formats). The AST is emitted as EBNF directly (ebnf-emit.ts) or turned into an
 * automaton where two languages must be intersected (char-automaton.ts).
 *
 * A pattern is a search (JSON Schema: it may match anywhere in the string): a side without its
 * anchor (`^`, `$`) gets "any characters" there. `^` and `$` may stand only at the ends of a
 * top-level alternative. Refused: lookaround, backreferences, word boundaries, Unicode property
 * classes, inline modifiers, `{,n}`, and repetition counts above `limits.maxPatternRepeat`.
 */
import { limits } from '../../../contract/index.ts';
import { SchemaRefusal } from './refusal.ts';

/** Code point ranges, sorted, disjoint, not touching; both ends included. */
export type CharSet = readonly (readonly [number, number])[];

export type Regex =
  | { t: 'set'; set: CharSet }
  | { t: 'seq'; items: Regex[] }
  | { t: 'alt'; items: Regex[] }
  | { t: 'rep'; node: Regex; min: number; max: number | null };

export const MAX_CODE_POINT = 0x10ffff;
/** Every character a string may hold (surrogates are not characters a well-formed reply can write). */
export const ANY_CHAR: CharSet = [[0, 0xd7ff], [0xe000, MAX_CODE_POINT]];

export const set = (s: CharSet): Regex => ({ t: 'set', set: s });
export const seq = (...all: Regex[]): Regex => {
  const items = all.filter((x) => !(x.t === 'seq' && x.items.length === 0));
  return items.length === 1 ? items[0]! : { t: 'seq', items };
};
export const alt = (...items: Regex[]): Regex => (items.length === 1 ? items[0]! : { t: 'alt', items });
export const rep = (node: Regex, min: number, max: number | null): Regex => ({ t: 'rep', node, min, max });
export const EMPTY: Regex = { t: 'seq', items: [] };
/** The literal string `s`. */
export function lit(s: string): Regex {
  return seq(...[...s].map((c) => set([[c.codePointAt(0)!, c.codePointAt(0)!]])));
}
export const anyString = (): Regex => rep(set(ANY_CHAR), 0, null);

/** Sorted, merged ranges. */
export function normalizeSet(ranges: readonly (readonly [number, number])[]): CharSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function complementSet(s: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of normalizeSet(s)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

export function intersectSets(a: CharSet, b: CharSet): CharSet {
  const out: [number, number][] = [];
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) {
    const lo = Math.max(alo, blo);
    const hi = Math.min(ahi, bhi);
    if (lo <= hi) out.push([lo, hi]);
  }
  return normalizeSet(out);
}

/** The shortest and longest string lengths of `r` (null: unbounded). */
export function lengthRange(r: Regex): [number, number | null] {
  switch (r.t) {
    case 'set':
      return r.set.length === 0 ? [Infinity, 0] : [1, 1];
    case 'seq':
      return r.items.reduce<[number, number | null]>(([a, b], x) => {
        const [c, d] = lengthRange(x);
        return [a + c, b === null || d === null ? null : b + d];
      }, [0, 0]);
    case 'alt': {
      const ls = r.items.map(lengthRange);
      return [Math.min(...ls.map((l) => l[0])), ls.some((l) => l[1] === null) ? null : Math.max(...ls.map((l) => l[1]!))];
    }
    case 'rep': {
      const [a, b] = lengthRange(r.node);
      return [a * r.min, r.max === null ? (b === 0 ? 0 : null) : b === null ? null : b * r.max];
    }
  }
}

const CLASS_ESCAPES: Record<string, CharSet> = {
  d: [[0x30, 0x39]],
  w: [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]],
  s: [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]],
};
const CONTROL_ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, f: 0x0c, v: 0x0b };
const LINE_TERMINATORS: CharSet = [[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]];

/**
 * The language of a JSON-Schema `pattern` (a search, unless anchored): the strings it matches.
 * Throws SchemaRefusal (path [], the caller adds its own) for what cannot be enforced.
 */
export function parsePattern(source: string): Regex {
  try {
    new RegExp(source, 'u');
  } catch (e) {
    throw new SchemaRefusal([], `it is not a valid regular expression (${(e as Error).message})`);
  }
  return new PatternParser(source).read();
}

class PatternParser {
  #i = 0;
  constructor(private readonly src: string) {}

  read(): Regex {
    const alts: Regex[] = [];
    for (;;) {
      let start = false;
      if (this.src[this.#i] === '^') {
        start = true;
        this.#i++;
      }
      const body = this.#sequence(true);
      let end = false;
      if (this.src[this.#i] === '$') {
        end = true;
        this.#i++;
      }
      alts.push(seq(...(start ? [] : [anyString()]), body, ...(end ? [] : [anyString()])));
      if (this.#i >= this.src.length) break;
      if (this.src[this.#i] !== '|') throw new SchemaRefusal([], '"^" and "$" may stand only at the ends of the pattern (or of a top-level alternative)');
      this.#i++;
    }
    return alt(...alts);
  }

  #alternatives(): Regex {
    const alts: Regex[] = [this.#sequence(false)];
    while (this.src[this.#i] === '|') {
      this.#i++;
      alts.push(this.#sequence(false));
    }
    return alt(...alts);
  }

  #sequence(top: boolean): Regex {
    const items: Regex[] = [];
    for (;;) {
      const c = this.src[this.#i];
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$' && top && (this.#i + 1 === this.src.length || this.src[this.#i + 1] === '|')) break;
      if (c === '^' || c === '$') throw new SchemaRefusal([], '"^" and "$" may stand only at the ends of the pattern (or of a top-level alternative)');
      const atom = c === '(' ? this.#group() : set(this.#atom());
      items.push(this.#quantified(atom));
    }
    return items.length === 1 ? items[0]! : { t: 'seq', items };
  }

  #group(): Regex {
    const rest = this.src.slice(this.#i);
    if (/^\(\?(=|!|<=|<!)/.test(rest)) throw new SchemaRefusal([], 'lookahead and lookbehind ("(?=", "(?!", "(?<=", "(?<!") cannot be enforced');
    if (/^\(\?[^:<]/.test(rest)) throw new SchemaRefusal([], 'inline modifiers ("(?i:") cannot be enforced');
    const named = /^\(\?<[^>]+>/.exec(rest);
    this.#i += named ? named[0].length : rest.startsWith('(?:') ? 3 : 1;
    const body = this.#alternatives();
    this.#i++; // ')'
    return body;
  }

  #quantified(atom: Regex): Regex {
    const rest = this.src.slice(this.#i);
    const m = /^(?:([*+?])|\{(\d+)(,(\d*))?\})\??/.exec(rest);
    if (!m) {
      if (rest.startsWith('{,')) throw new SchemaRefusal([], 'a quantifier "{,n}" cannot be enforced: write "{0,n}"');
      return atom;
    }
    this.#i += m[0].length;
    if (m[1] === '*') return rep(atom, 0, null);
    if (m[1] === '+') return rep(atom, 1, null);
    if (m[1] === '?') return rep(atom, 0, 1);
    const min = Number(m[2]);
    const max = m[3] === undefined ? min : m[4] === '' ? null : Number(m[4]);
    for (const n of [min, max]) {
      if (n !== null && n > limits.maxPatternRepeat) throw new SchemaRefusal([], `a quantifier may repeat at most ${limits.maxPatternRepeat} times, got ${n}`);
    }
    return rep(atom, min, max);
  }

  #atom(): CharSet {
    const c = this.src[this.#i]!;
    if (c === '[') return this.#class();
    if (c === '.') {
      this.#i++;
      return complementSet(LINE_TERMINATORS);
    }
    if (c === '\\') return this.#escape(false);
    const cp = this.src.codePointAt(this.#i)!;
    this.#i += cp > 0xffff ? 2 : 1;
    return [[cp, cp]];
  }

  #escape(inClass: boolean): CharSet {
    const c = this.src[this.#i + 1]!;
    const lower = c.toLowerCase();
    if (c === 'b' && !inClass) throw new SchemaRefusal([], 'word boundaries ("\\b") cannot be enforced');
    if (c === 'B') throw new SchemaRefusal([], 'word boundaries ("\\B") cannot be enforced');
    if (c === 'p' || c === 'P') throw new SchemaRefusal([], 'Unicode property classes ("\\p{…}") cannot be enforced');
    if (/[1-9]/.test(c) || c === 'k') throw new SchemaRefusal([], 'backreferences cannot be enforced');
    this.#i += 2;
    if (lower in CLASS_ESCAPES) {
      const ranges = CLASS_ESCAPES[lower]!;
      return c === lower ? ranges : complementSet(ranges);
    }
    const one = (cp: number): CharSet => [[cp, cp]];
    if (c in CONTROL_ESCAPES) return one(CONTROL_ESCAPES[c]!);
    if (c === 'b') return one(0x08);
    if (c === '0') return one(0);
    if (c === 'c') return one(this.src[this.#i++]!.toUpperCase().charCodeAt(0) - 64);
    if (c === 'x') {
      const hex = this.src.slice(this.#i, this.#i + 2);
      this.#i += 2;
      return one(parseInt(hex, 16));
    }
    if (c === 'u') {
      if (this.src[this.#i] === '{') {
        const end = this.src.indexOf('}', this.#i);
        const cp = parseInt(this.src.slice(this.#i + 1, end), 16);
        this.#i = end + 1;
        return one(cp);
      }
      const cp = parseInt(this.src.slice(this.#i, this.#i + 4), 16);
      this.#i += 4;
      // A surrogate pair written as two escapes: one code point.
      if (cp >= 0xd800 && cp <= 0xdbff && /^\\u[dD][c-fC-F][0-9a-fA-F]{2}/.test(this.src.slice(this.#i))) {
        const low = parseInt(this.src.slice(this.#i + 2, this.#i + 6), 16);
        this.#i += 6;
        return one(0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00));
      }
      return one(cp);
    }
    return one(this.src.codePointAt(this.#i - 1)!);
  }

  #class(): CharSet {
    this.#i++; // '['
    const negated = this.src[this.#i] === '^';
    if (negated) this.#i++;
    const ranges: [number, number][] = [];
    while (this.src[this.#i] !== ']') {
      const lo = this.#classAtom();
      if (this.src[this.#i] === '-' && this.src[this.#i + 1] !== ']' && lo.length === 1 && lo[0]![0] === lo[0]![1]) {
        this.#i++;
        const hi = this.#classAtom();
        if (hi.length !== 1 || hi[0]![0] !== hi[0]![1]) throw new SchemaRefusal([], 'a class range must end at a single character');
        ranges.push([lo[0]![0], hi[0]![0]]);
        continue;
      }
      ranges.push(...lo.map(([a, b]) => [a, b] as [number, number]));
    }
    this.#i++; // ']'
    const s = normalizeSet(ranges);
    return negated ? complementSet(s) : s;
  }

  #classAtom(): CharSet {
    if (this.src[this.#i] === '\\') return this.#escape(true);
    const cp = this.src.codePointAt(this.#i)!;
    this.#i += cp > 0xffff ? 2 : 1;
    return [[cp, cp]];
  }
}
