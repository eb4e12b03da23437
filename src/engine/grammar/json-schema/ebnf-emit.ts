/**
 * Writing XGrammar's EBNF: rules by name, the JSON text of a set of characters inside a string,
 * a Regex (regex.ts) as nested expressions, an automaton (char-automaton.ts) as one rule per state.
 *
 * Inside a JSON string a character is written as JSON.stringify writes it: itself where JSON allows
 * it raw; `\"`, `\\`, `\b \f \n \r \t`, or `\u00xx` (lowercase) for the rest of U+0000–U+001F. So
 * each string has one writing, and the language a pattern describes (decoded characters) is the
 * language enforced. Non-ASCII characters: xgrammar 0.1.27 matches a class of them only as a whole
 * (`[^\x00-\x7f]`: all of them) or one by one; a set of them that is neither (a range, "all but
 * these") is narrowed to its ASCII part and listed characters (`writable`): still valid output,
 * fewer strings.
 */
import { mapSets, type Dfa } from './char-automaton.ts';
import { SchemaRefusal } from './refusal.ts';
import { complementSet, intersectSets, normalizeSet, type CharSet, type Regex } from './regex.ts';

/** Most non-ASCII characters a set may name one by one. */
const MAX_LISTED = 64;
const NON_ASCII: CharSet = [[0x80, 0xd7ff], [0xe000, 0x10ffff]];
const SHORT_ESCAPES: Record<number, string> = { 0x08: 'b', 0x09: 't', 0x0a: 'n', 0x0c: 'f', 0x0d: 'r', 0x22: '"', 0x5c: '\\' };

const size = (s: CharSet) => s.reduce((n, [lo, hi]) => n + hi - lo + 1, 0);
const sameSet = (a: CharSet, b: CharSet) => a.length === b.length && a.every(([lo, hi], i) => lo === b[i]![0] && hi === b[i]![1]);

/** The part of `s` this grammar engine can write: all of ASCII's part, and non-ASCII if all or few. */
export function writable(s: CharSet): CharSet {
  const ascii = intersectSets(s, [[0, 0x7f]]);
  const high = intersectSets(s, NON_ASCII);
  if (high.length === 0 || sameSet(high, NON_ASCII) || size(high) <= MAX_LISTED) return normalizeSet([...ascii, ...high]);
  return ascii;
}

/** An EBNF string literal of `text` (its characters as they are, `"` and `\` escaped). */
export function quoted(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A printable ASCII character inside an EBNF class: itself, `\\ ] - ^ [` escaped (xgrammar reads `\\x` escapes greedily: `\\x2d0` is one code point). */
const classChar = (cp: number) => {
  const c = String.fromCharCode(cp);
  if (cp === 0x7f) return '\\u007f';
  return '\\]-^['.includes(c) ? `\\${c}` : c;
};

/** One character of `s` as it is written inside a JSON string; null when none can be. */
export function charsExpr(s: CharSet): string | null {
  const { plain, escaped } = charsParts(s);
  const parts = plain === null ? escaped : [plain, ...escaped];
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : `(${parts.join(' | ')})`;
}

/**
 * One character of `s` as written inside a JSON string, in two parts: `plain`, one class of the
 * characters written as themselves (its ASCII part, and every non-ASCII character where `s` has
 * them all: then a negated class, as JSON_CHAR's); `escaped`, the other writings (escapes, listed
 * non-ASCII characters). An automaton's loop is written as a run, `plain*`, between the others
 * (`dfaRules`).
 */
export function charsParts(s: CharSet): { plain: string | null; escaped: string[] } {
  const w = writable(s);
  const escaped: string[] = [];
  const printable = intersectSets(w, [[0x20, 0x7f]]).flatMap(([lo, hi]) => {
    const runs: [number, number][] = [];
    for (let c = lo; c <= hi; c++) {
      if (c === 0x22 || c === 0x5c) continue;
      const last = runs[runs.length - 1];
      if (last && last[1] === c - 1) last[1] = c;
      else runs.push([c, c]);
    }
    return runs;
  });
  const high = intersectSets(w, NON_ASCII);
  const allHigh = sameSet(high, NON_ASCII);
  let plain: string | null = null;
  if (allHigh) {
    // Every non-ASCII character: the class of all but the ASCII characters not written as themselves.
    const out = complementSet(normalizeSet(printable)).filter(([lo]) => lo <= 0x7f).map(([lo, hi]) => [lo, Math.min(hi, 0x7f)] as const);
    plain = `[^${out.map(([x, y]) => (x === y ? classCharAny(x) : `${classCharAny(x)}-${classCharAny(y)}`)).join('')}]`;
  } else if (printable.length > 0) {
    plain = `[${printable.map(([x, y]) => (x === y ? classChar(x) : `${classChar(x)}-${classChar(y)}`)).join('')}]`;
  }
  const controls = intersectSets(w, [[0, 0x1f], [0x22, 0x22], [0x5c, 0x5c]]);
  if (intersectSets(controls, [[0, 0x1f]]).length === 1 && size(intersectSets(controls, [[0, 0x1f]])) === 0x20) {
    // Every control character (a complement, "any but…"): their writings as two alternatives, as
    // JSON_CHAR writes them, not 34 literals in every state of an automaton (xgrammar compiles a
    // rule's alternatives one by one: the test suite's schema requiring __proto__, toString and
    // constructor compiled in 7.6 s with them listed, 0.29 s so, on a 49,152-token vocabulary).
    // `"` and `\` where the set has them (inside an EBNF class: `"` and `\\`).
    const quoteOrSlash = [[0x22, '"'], [0x5c, '\\\\']].filter(([c]) => size(intersectSets(controls, [[c as number, c as number]])) > 0).map(([, t]) => t);
    escaped.push(`"\\\\" [${quoteOrSlash.join('')}bfnrt]`, '"\\\\u00" ("0" [0-7bef] | "1" [0-9a-f])');
  } else {
    for (const [lo, hi] of controls) for (let c = lo; c <= hi; c++) escaped.push(quoted(SHORT_ESCAPES[c] ? `\\${SHORT_ESCAPES[c]}` : `\\u${c.toString(16).padStart(4, '0')}`));
  }
  if (!allHigh) for (const [lo, hi] of high) for (let c = lo; c <= hi; c++) escaped.push(quoted(String.fromCodePoint(c)));
  return { plain, escaped };
}

/** Any ASCII character inside an EBNF class (a control character as `\u00XX`). */
const classCharAny = (cp: number) => (cp < 0x20 ? `\\u${cp.toString(16).padStart(4, '0')}` : classChar(cp));

/** A grammar under construction: rules by name, `root` first. */
export class Ebnf {
  readonly #rules = new Map<string, string>();
  #next = 0;

  /** A new rule name starting with `prefix`. */
  name(prefix: string): string {
    return `${prefix.replace(/[^a-zA-Z0-9_]/g, '_')}_${this.#next++}`;
  }

  set(name: string, body: string): string {
    this.#rules.set(name, body);
    return name;
  }

  has(name: string): boolean {
    return this.#rules.has(name);
  }

  /** A new rule of `body`. */
  rule(prefix: string, body: string): string {
    return this.set(this.name(prefix), body);
  }

  text(): string {
    const root = this.#rules.get('root');
    const lines = root === undefined ? [] : [`root ::= ${root}`];
    for (const [name, body] of this.#rules) if (name !== 'root') lines.push(`${name} ::= ${body}`);
    return `${lines.join('\n')}\n`;
  }
}

/** `r` as one EBNF expression (characters written as inside a JSON string). */
export function regexExpr(r: Regex): string {
  switch (r.t) {
    case 'set': {
      const e = charsExpr(r.set);
      if (e === null) throw new SchemaRefusal([], 'it needs characters this grammar engine cannot write (a range of non-ASCII characters)');
      return e;
    }
    case 'seq':
      return r.items.length === 0 ? '""' : r.items.length === 1 ? regexExpr(r.items[0]!) : `(${r.items.map(regexExpr).join(' ')})`;
    case 'alt':
      return `(${r.items.map(regexExpr).join(' | ')})`;
    case 'rep': {
      const inner = r.node.t === 'rep' ? `(${regexExpr(r.node)})` : regexExpr(r.node);
      const { min, max } = r;
      if (max === 0) return '""';
      if (min === 0 && max === null) return `${inner}*`;
      if (min === 1 && max === null) return `${inner}+`;
      if (min === 0 && max === 1) return `${inner}?`;
      if (max === null) return `${inner}{${min},}`;
      return min === max ? `${inner}{${min}}` : `${inner}{${min},${max}}`;
    }
  }
}

/** `d` as rules, one per state (what it writes narrowed to `writable`); the start rule's name, or null when it accepts nothing writable. */
export function dfaRules(d: Dfa, g: Ebnf, prefix: string): string | null {
  const w = mapSets(d, writable);
  if (w.accept.length === 0) return null;
  const names = w.accept.map(() => g.name(prefix));
  // A state's loop on itself as a run of its plain characters, then the rest (the loop's other
  // writings back to the state, the other edges, the end): S ::= plain* (escape S | D T | "").
  // The same language; xgrammar fills a mask inside a class under `*` from its compiled cache,
  // and walks every token at run time inside a loop of alternatives (120-130 ms a step on a
  // 49,152-token vocabulary for `pattern: "^a"`, 0.2 ms so: string-grammar.ts, jsonTextRule).
  const runs = w.edges.map((edges, q) => {
    const loop = edges.find((e) => e.to === q);
    const parts = loop ? charsParts(loop.set) : null;
    return { loop, parts, run: parts?.plain ?? null };
  });
  /** What follows a state's run (or the state's alternatives, where it has none); `merge`: edges written as below. */
  const rest = (q: number, merge: boolean): string[] => {
    const { loop, parts, run } = runs[q]!;
    const alts = w.edges[q]!.flatMap((e) => {
      if (e !== loop || run === null) return [merge ? edge(e) : `${charsExpr(e.set)!} ${names[e.to]}`];
      return parts!.escaped.length === 0 ? [] : [`(${parts!.escaped.join(' | ')}) ${names[q]}`];
    });
    if (w.accept[q]) alts.push('""');
    return alts;
  };
  /** An edge into a state that runs on the edge's own class, as `plain+` then that state's rest (C T, T ::= C* R: C+ R), which xgrammar compiles 30 times faster (e-mail: 239 -> 8 ms). */
  function edge(e: { set: CharSet; to: number }): string {
    const into = runs[e.to]!;
    if (into.run !== null && into.loop !== e) {
      const parts = charsParts(e.set);
      if (parts.plain === into.run && parts.escaped.length === 0) {
        const after = rest(e.to, false);
        return after.length === 1 && after[0] === '""' ? `${into.run}+` : `${into.run}+ (${after.join(' | ')})`;
      }
    }
    return `${charsExpr(e.set)!} ${names[e.to]}`;
  }
  const bodies = w.edges.map((_, q) => {
    const { run } = runs[q]!;
    const alts = rest(q, true);
    if (run === null || alts.length === 0) return alts.join(' | ');
    return alts.length === 1 && alts[0] === '""' ? `${run}*` : `${run}* (${alts.join(' | ')})`;
  });
  // Only the states a rule still names (a state entered only by merged edges is written inside them).
  const index = new Map(names.map((n, q) => [n, q]));
  const reached = new Set([0]);
  for (const q of reached) for (const word of bodies[q]!.match(/\b[A-Za-z_][A-Za-z0-9_]*\b/g) ?? []) if (index.has(word)) reached.add(index.get(word)!);
  for (const q of [...reached].sort((a, b) => a - b)) g.set(names[q]!, bodies[q]!);
  return names[0]!;
}
