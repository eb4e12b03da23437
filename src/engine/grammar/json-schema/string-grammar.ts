/**
 * A string's constraints as one language: `pattern`s, `format` (a pattern of our own:
 * format-patterns.ts), `minLength`/`maxLength` (code points, as JSON Schema counts). One pattern
 * or format alone is written as its expression; several, or a length beside them, are intersected
 * exactly as automata (where one language is inside the others, that one is written alone).
 */
import { FORMAT_PATTERNS } from '../format-patterns.ts';
import { intersect, isEmpty, isSubset, MAX_STATES, regexDfa, withLength, type Dfa } from './char-automaton.ts';
import { dfaRules, Ebnf, regexExpr } from './ebnf-emit.ts';
import type { Flat, Path } from './flat.ts';
import { refusedAt, SchemaRefusal } from './refusal.ts';
import { lengthRange, parsePattern, seq, type Regex } from './regex.ts';

/** A character JSON.stringify writes as itself inside a string. */
const PLAIN_CHAR = '[^"\\\\\\x00-\\x1f]';
/** A character JSON.stringify escapes: a quote, a backslash, or a control character (a short escape, else `u00XX`). */
const ESCAPE = '"\\\\" ["\\\\bfnrt] | "\\\\u00" ("0" [0-7bef] | "1" [0-9a-f])';
/** One character inside a JSON string, as JSON.stringify writes it. */
export const JSON_CHAR = `(${PLAIN_CHAR} | ${ESCAPE})`;
/**
 * The body of the rule `name`: any number of characters inside a JSON string (the language of
 * JSON_CHAR*), as runs of plain characters between escapes. xgrammar fills a mask inside this in
 * 0.15 ms, against 120-130 ms inside `JSON_CHAR*` (a 49,152-token vocabulary, 2026-12-02): a
 * class under `*` is a position whose tokens xgrammar decides from its compiled cache, while each
 * character of an alternation under `*` leaves it every token to walk at run time.
 */
export function jsonTextRule(name: string): string {
  return `${PLAIN_CHAR}* ((${ESCAPE}) ${name})?`;
}

interface Part {
  regex: Regex;
  path: Path;
}

/** The string constraints of `f` as languages (patterns and formats), each with its keyword's path. */
export function stringParts(f: Flat): Part[] {
  const parts: Part[] = [];
  for (const p of f.patterns) parts.push({ regex: refusedAt(p.path, () => parsePattern(p.source)), path: p.path });
  for (const fm of f.formats) {
    const source = (FORMAT_PATTERNS as Record<string, string | undefined>)[fm.name];
    if (source) parts.push({ regex: parsePattern(source), path: fm.path });
  }
  return parts;
}

/**
 * Past this many states, a length bound beside a pattern is kept by the matcher where the
 * compiler allows it (`guard`; length-guard.ts): on a 49,152-token vocabulary xgrammar compiled
 * e-mail ∩ at most 12 characters (about 100 states) in 685 ms, and e-mail with its bound kept by
 * the matcher in 60-160 ms (2026-12-03).
 */
export const GUARD_PAST_STATES = 32;
/**
 * Past this `maxLength`, a string with no pattern has its bound kept by the matcher where the
 * compiler allows it: in the grammar the bound is a copy of a character per unit, which xgrammar
 * compiles in 50–70 ms a unit on a 150,000-token vocabulary, and whose masks it fills by walking
 * the vocabulary (docs/structured-output.md, "The grammar cache and compile costs").
 */
export const GUARD_PAST_CHARS = 8;
/** Any string: every code point (JSON text holds no lone surrogate). */
const ANY_STRING: Dfa = { accept: [true], edges: [[{ set: [[0, 0xd7ff], [0xe000, 0x10ffff]], to: 0 }]] };

/**
 * The content of a string (between its quotes) satisfying `f`'s string keywords; null when none.
 * `jsonChar`, `jsonText`: the rules of one character and of any characters (JSON_CHAR,
 * jsonTextRule). `guard`: asked, where `maxLength` beside a pattern would grow the automaton past
 * GUARD_PAST_STATES, whether the matcher keeps the bound (it is given the language without it);
 * when it says no (or is absent), the bound is in the grammar. A pattern whose long counted
 * repetition is a length bound (`lengthCounted`) is asked about the same way.
 */
export function stringContent(f: Flat, g: Ebnf, jsonChar: string, jsonText: string, guard?: (dfa: Dfa, max: number) => boolean): string | null {
  if (guard) {
    const counted = countedContent(f, g, guard);
    if (counted !== undefined) return counted;
  }
  const min = f.minLength;
  const max = f.maxLength;
  if (max !== null && min > max) return null;
  const parts = stringParts(f);
  const lengthFits = (r: Regex) => {
    const [lo, hi] = lengthRange(r);
    return lo >= min && (max === null || (hi !== null && hi <= max));
  };
  if (parts.length === 0) {
    const unbounded = min === 0 ? jsonText : `${jsonChar}{${min}} ${jsonText}`;
    if (max === null) return unbounded;
    const counted = max > GUARD_PAST_CHARS && guard ? withLength(ANY_STRING, min, null, MAX_STATES) : null;
    if (counted && guard!(counted, max)) return unbounded;
    return max === 0 ? '""' : min === max ? `${jsonChar}{${min}}` : `${jsonChar}{${min},${max}}`;
  }
  if (parts.length === 1 && lengthFits(parts[0]!.regex)) return refusedAt(parts[0]!.path, () => patternExpr(parts[0]!.regex, g));
  const dfas = parts.map((p) => refusedAt(p.path, () => regexDfa(p.regex)));
  // A language inside all the others (zod's uuid pattern beside format "uuid"): written alone.
  for (let i = 0; i < parts.length; i++) {
    if (!lengthFits(parts[i]!.regex)) continue;
    if (dfas.every((d, j) => j === i || isSubset(dfas[i]!, d))) return refusedAt(parts[i]!.path, () => patternExpr(parts[i]!.regex, g));
  }
  const last = parts[parts.length - 1]!.path;
  let dfa: Dfa = dfas[0]!;
  for (let i = 1; i < dfas.length; i++) dfa = refusedAt(parts[i]!.path, () => intersect(dfa, dfas[i]!));
  if (isEmpty(dfa)) throw new SchemaRefusal(last, 'no string satisfies both this and the other pattern or format beside it');
  if (max !== null && guard && withLength(dfa, min, max, GUARD_PAST_STATES) === null) {
    const unbounded = refusedAt(f.at['minLength'] ?? last, () => withLength(dfa, min, null));
    if (!isEmpty(unbounded) && guard(unbounded, max)) return dfaRules(unbounded, g, 'str');
  }
  if (min > 0 || max !== null) dfa = refusedAt(f.at['maxLength'] ?? last, () => withLength(dfa, min, max));
  if (isEmpty(dfa)) return null;
  const start = dfaRules(dfa, g, 'str');
  return start;
}

/**
 * Past this count, a counted repetition in a pattern (`^[a-z0-9_-]{1,230}$`) is a length bound:
 * as an automaton it is a state per count, which xgrammar compiles in seconds (this MQTT topic
 * pattern, JSONSchemaBench's Github_easy o6261: more than 10 s on a 49,152-token vocabulary).
 */
export const GUARD_PAST_COUNT = 16;

/**
 * A pattern whose long counted repetition is a length bound, kept by the matcher: that repetition
 * unbounded, and the pattern's longest length as `maxLength`, where that is exactly the same
 * language (`lengthCounted`). undefined: not such a string, or the matcher may not keep its bound
 * here; the caller writes it as before.
 */
function countedContent(f: Flat, g: Ebnf, guard: (dfa: Dfa, max: number) => boolean): string | null | undefined {
  if (f.patterns.length === 0) return undefined;
  const parts = stringParts(f);
  const counts = parts.map((p) => lengthCounted(p.regex));
  if (counts.every((c) => c === null)) return undefined;
  let max = f.maxLength;
  for (const c of counts) if (c) max = max === null ? c.hi : Math.min(max, c.hi);
  let dfa: Dfa;
  try {
    dfa = parts.map((p, i) => regexDfa(counts[i]?.relaxed ?? p.regex)).reduce((a, b) => intersect(a, b));
  } catch (e) {
    if (e instanceof SchemaRefusal) return undefined;
    throw e;
  }
  if (max === null || f.minLength > max) return undefined;
  if (isEmpty(dfa) || withLength(dfa, f.minLength, max, GUARD_PAST_STATES) !== null) return undefined;
  dfa = withLength(dfa, f.minLength, null);
  if (isEmpty(dfa) || !guard(dfa, max)) return undefined;
  return dfaRules(dfa, g, 'str');
}

/**
 * A pattern that is a sequence of parts of fixed lengths, one of them a repetition counted past
 * GUARD_PAST_COUNT (`^[a-z0-9_-]{1,230}$`, `^[a-z][a-z0-9-]{0,62}$`, `^id-\d{1,40}$`): the same
 * sequence with that repetition unbounded, within the pattern's longest length, is the same
 * language (the length fixes the count). null for any other pattern (`^a{1,30}b{1,30}$` is not
 * `^a+b+$` of at most 60).
 */
export function lengthCounted(r: Regex): { relaxed: Regex; hi: number } | null {
  const items: Regex[] = [];
  const flatten = (x: Regex): void => void (x.t === 'seq' ? x.items.forEach(flatten) : items.push(x));
  flatten(r);
  let at = -1;
  for (let i = 0; i < items.length; i++) {
    const x = items[i]!;
    if (x.t === 'rep' && x.max !== null && x.max > GUARD_PAST_COUNT && x.max > x.min) {
      if (at >= 0) return null;
      at = i;
    }
  }
  if (at < 0) return null;
  const counted = items[at] as Extract<Regex, { t: 'rep' }>;
  const fixed = (x: Regex) => {
    const [lo, hi] = lengthRange(x);
    return lo === hi;
  };
  if (!items.every((x, i) => fixed(i === at ? counted.node : x)) || lengthRange(counted.node)[0] === 0) return null;
  const hi = lengthRange(r)[1]!;
  return { relaxed: seq(...items.map((x, i) => (i === at ? { ...counted, max: null } : x))), hi };
}

/**
 * A pattern's language as EBNF: an unbounded one (a `*` or `+`: a URI, an e-mail address) as its
 * automaton, one rule per state, which xgrammar compiles faster than the nested expression
 * (format uri 308 -> 176 ms, email 217 -> 162 ms on a 49,152-token vocabulary, 2026-12-02); a
 * bounded one (a UUID, a date) as the expression, which is smaller there.
 */
function patternExpr(regex: Regex, g: Ebnf): string {
  if (lengthRange(regex)[1] !== null) return regexExpr(regex);
  try {
    return dfaRules(regexDfa(regex), g, 'str') ?? regexExpr(regex);
  } catch (e) {
    if (e instanceof SchemaRefusal) return regexExpr(regex); // too many states as an automaton: the expression
    throw e;
  }
}
