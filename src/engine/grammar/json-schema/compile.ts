/**
 * A JSON schema lowered into XGrammar's EBNF: the language of the JSON texts the engine may write
 * for it (one line, `", "` and `": "` separators, properties in the schema's order), each of them
 * valid against the schema. Pure: no grammar engine here; xgrammar-backend.ts compiles the text.
 * What cannot be enforced exactly throws SchemaRefusal at the keyword (docs/structured-output.md).
 *
 * - Values: flat.ts reads each schema as alternatives of flat constraints; each alternative is one
 *   EBNF alternative. A `$ref` alone is a rule of its own, so recursion is a rule that calls itself
 *   (no depth bound: the reply's `max_tokens` bounds it).
 * - Policy (what the engine writes of what the schema allows): no property beyond `properties`
 *   unless `additionalProperties` or `patternProperties` allows one (an object schema with neither
 *   nor `properties` takes any members); no item past `prefixItems` unless `items` allows one;
 *   numbers without an exponent where a bound applies; unique items in their domain's order.
 */
import type { JsonSchema } from '../../../contract/index.ts';
import { complement, intersect, regexDfa, type Dfa } from './char-automaton.ts';
import { dfaRules, Ebnf, quoted, regexExpr } from './ebnf-emit.ts';
import { anyFlat, extrasFor, Flattener, isAny, type Flat, type Path, type Sub } from './flat.ts';
import { finiteDomain, satisfies, satisfiesSubs } from './flat-validate.ts';
import { gcd, writeJson } from './json-value.ts';
import { decimalMultiples, integerMultiples, integerRange, multipleTest, numberRange, type Bound, type Lang } from './numeric.ts';
import { SchemaRefusal } from './refusal.ts';
import { alt, lit, parsePattern, type Regex } from './regex.ts';
import { JSON_CHAR, jsonTextRule, stringContent, stringParts } from './string-grammar.ts';
import { placesMeet, type GuardPlace, type KeyStep, type LengthGuard } from './length-guard.ts';

const SEP = '", "';
const COLON = '": "';
const NUMBER = '"-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?';
const INTEGER = '("0" | "-"? [1-9] [0-9]*)';
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** The EBNF (root rule `root`) of the JSON texts the engine writes for `schema`, every bound in the grammar. */
export function schemaToEbnf(schema: JsonSchema): string {
  return new SchemaCompiler(schema, null).compile();
}

/**
 * The EBNF of `schema`, and the length bounds its matcher keeps (length-guard.ts). A guard goes
 * only where no string of the schema bounded otherwise can stand on the same key path; one that
 * would share its place is compiled again with its bound in the grammar.
 */
export function schemaToGrammar(schema: JsonSchema): { ebnf: string; guards: LengthGuard[] } {
  const inGrammar = new Set<number>();
  for (;;) {
    const compiler = new SchemaCompiler(schema, inGrammar);
    const ebnf = compiler.compile();
    const shared = compiler.sharedGuards();
    if (shared.length === 0) return { ebnf, guards: compiler.guards() };
    for (const n of shared) inGrammar.add(n);
  }
}

/**
 * Where a value being compiled stands: a key path (length-guard.ts) from the root (`ref` null) or
 * from wherever the reference `ref` is used (the schema a reference names is one rule, compiled once).
 */
interface Place extends GuardPlace {
  ref: string | null;
}
const placeKey = (p: Place) => JSON.stringify([p.ref, p.keys, p.under]);
/** The most key paths one reference's value is followed on (`#basesOf`). */
const MAX_BASES = 256;

class SchemaCompiler {
  readonly g = new Ebnf();
  readonly fl: Flattener;
  readonly #refs = new Map<string, string>();
  /** The sub-schema lists being compiled now (by the identity of their schemas): how many references were rules when each began. */
  readonly #open = new Map<string, number>();
  readonly #ids = new Map<object, number>();
  /** Where the value being compiled stands. */
  #place: Place = { ref: null, keys: [], under: false };
  /** Where each reference is used (by placeKey). */
  readonly #refUses = new Map<string, Map<string, Place>>();
  /** Where the value of each reference may stand, from the root (`#basesOf`, once a compile is done). */
  readonly #bases = new Map<string, GuardPlace[]>();
  /** Every place a string may stand, with the guard of the string written there (an index in #guards), or null. */
  readonly #strings: { place: Place; guard: number | null }[] = [];
  readonly #guards: { n: number; dfa: Dfa; max: number; same: string }[] = [];
  /** How many strings were compiled so far (a guard's number is its string's, the same in every pass). */
  #asked = 0;

  /** `inGrammar`: the numbers of the guards to keep in the grammar; null: no guards at all. */
  constructor(private readonly schema: JsonSchema, private readonly inGrammar: Set<number> | null) {
    this.fl = new Flattener(schema);
  }

  /**
   * The numbers of the guards that another string may meet on a key path, unless that string
   * carries the same guard (the same bound on the same language: the matcher cannot tell them
   * apart, and need not).
   */
  sharedGuards(): number[] {
    if (this.#guards.length === 0) return [];
    const places = this.#strings.map((s) => this.#resolve(s.place));
    const guardOf = (i: number) => (this.#strings[i]!.guard === null ? null : this.#guards[this.#strings[i]!.guard!]!);
    const shared: number[] = [];
    this.#strings.forEach((s, i) => {
      const mine = guardOf(i);
      if (mine === null) return;
      const clash = places[i]!.length === 0 || places.some((other, j) => j !== i && guardOf(j)?.same !== mine.same && other.some((o) => places[i]!.some((p) => placesMeet(p, o))));
      if (clash) shared.push(mine.n);
    });
    return shared;
  }

  guards(): LengthGuard[] {
    return this.#strings.filter((s) => s.guard !== null).map((s) => ({ places: this.#resolve(s.place), dfa: this.#guards[s.guard!]!.dfa, max: this.#guards[s.guard!]!.max }));
  }

  /** The key paths from the root that `place` stands for. */
  #resolve(place: Place): GuardPlace[] {
    if (place.ref === null) return [{ keys: place.keys, under: place.under }];
    return this.#basesOf(place.ref).map((b) => (b.under ? b : { keys: [...b.keys, ...place.keys], under: place.under }));
  }

  /**
   * Where the value of the reference `pointer` may stand, from the root: through each use, the
   * place it is used at. Where a reference on the way is used from within itself (recursion),
   * anywhere under the places its chain of uses starts from.
   */
  #basesOf(pointer: string): GuardPlace[] {
    const known = this.#bases.get(pointer);
    if (known) return known;
    const usesOf = (ptr: string) => [...(this.#refUses.get(ptr)?.values() ?? [])];
    const upward = (from: string): { refs: Set<string>; starts: Map<string, Place> } => {
      const refs = new Set<string>();
      const starts = new Map<string, Place>();
      const todo = [from];
      while (todo.length) {
        for (const use of usesOf(todo.pop()!)) {
          if (use.ref === null) starts.set(placeKey(use), use);
          else if (!refs.has(use.ref)) (refs.add(use.ref), todo.push(use.ref));
        }
      }
      return { refs, starts };
    };
    const { refs, starts } = upward(pointer);
    const recursive = [pointer, ...refs].some((r) => upward(r).refs.has(r));
    let bases = recursive ? [...starts.values()].map((s) => ({ keys: s.keys, under: true })) : usesOf(pointer).flatMap((u) => this.#resolve(u));
    // References used in many places within references used in many places: paths multiply. Past
    // MAX_BASES, anywhere (a guard there meets any other string, and its bound stays in the grammar).
    if (bases.length > MAX_BASES) bases = [{ keys: [], under: true }];
    this.#bases.set(pointer, bases);
    return bases;
  }

  /** A string may stand here (`guard`: the index of its guard). */
  #stringHere(guard: number | null = null): void {
    this.#strings.push({ place: this.#place, guard });
  }

  /** Where a member's value stands. */
  #member(key: KeyStep): Place {
    const p = this.#place;
    return p.under ? p : { ...p, keys: [...p.keys, key] };
  }

  /** Where the strings of any JSON value here stand: here, and anywhere below. */
  #anywhere(): Place {
    return { ...this.#place, under: true };
  }

  /** `make`, with the values it compiles standing at `place`. */
  #at<T>(place: Place, make: () => T): T {
    const before = this.#place;
    this.#place = place;
    try {
      return make();
    } finally {
      this.#place = before;
    }
  }

  compile(): string {
    this.g.set('jchar', JSON_CHAR);
    this.g.set('jtext', jsonTextRule('jtext'));
    this.g.set('jstring', '"\\"" jtext "\\""');
    this.g.set('jnumber', `(${NUMBER})`);
    this.g.set('anyarr', `"[" ("" | any (${SEP} any)*) "]"`);
    this.g.set('anyobj', `"{" ("" | jstring ${COLON} any (${SEP} jstring ${COLON} any)*) "}"`);
    this.g.set('any', '"null" | "true" | "false" | jnumber | jstring | anyarr | anyobj');
    const root = this.value([{ schema: this.schema, path: [] }], []);
    if (root === null) throw new SchemaRefusal([], 'no JSON value satisfies this schema');
    this.g.set('root', root);
    return this.g.text();
  }

  /** A rule for the values satisfying every schema of `subs`; null when none does. */
  value(subs: Sub[], path: Path): string | null {
    // The same schemas again while they are being compiled, and no reference named as a rule
    // since: the same work would repeat without end (a reference merged with other keywords, an
    // allOf of two, is inlined anew at every level). A reference alone becomes a rule, and ends it.
    const key = subs.map((s) => (typeof s.schema === 'object' && s.schema !== null ? this.#idOf(s.schema) : String(s.schema))).join(',');
    const before = this.#open.get(key);
    if (before === this.#refs.size) throw new SchemaRefusal(subs[0]!.path, 'a recursive reference is enforced only alone in its schema (with annotations), not merged with other keywords');
    this.#open.set(key, this.#refs.size);
    try {
      return this.#value(subs, path);
    } finally {
      if (before === undefined) this.#open.delete(key);
      else this.#open.set(key, before);
    }
  }

  #idOf(schema: object): number {
    let id = this.#ids.get(schema);
    if (id === undefined) this.#ids.set(schema, (id = this.#ids.size + 1));
    return id;
  }

  #value(subs: Sub[], path: Path): string | null {
    let flats = [anyFlat()];
    for (const s of subs) flats = this.fl.cross(flats, this.fl.expand(s), s.path);
    const exprs = flats.map((f) => this.flat(f)).filter((e): e is string => e !== null);
    if (exprs.length === 0) return null;
    if (exprs.length === 1 && /^[a-zA-Z0-9_]+$/.test(exprs[0]!)) return exprs[0]!;
    return this.g.rule(nameFor(path), exprs.join(' | '));
  }

  ref(ref: { pointer: string; path: Path }): string | null {
    let uses = this.#refUses.get(ref.pointer);
    if (!uses) this.#refUses.set(ref.pointer, (uses = new Map()));
    uses.set(placeKey(this.#place), this.#place);
    const known = this.#refs.get(ref.pointer);
    if (known !== undefined) return known;
    const name = this.g.name(`ref_${ref.pointer.split('/').pop() ?? 'root'}`);
    this.#refs.set(ref.pointer, name);
    const exprs = this.#at({ ref: ref.pointer, keys: [], under: false }, () => this.fl.inline(ref).map((f) => this.flat(f))).filter((e): e is string => e !== null);
    if (exprs.length === 0) throw new SchemaRefusal(ref.path, `no JSON value satisfies the schema ${ref.pointer} names`);
    this.g.set(name, exprs.join(' | '));
    return name;
  }

  flat(f: Flat): string | null {
    if (f.ref) return this.ref(f.ref);
    if (isAny(f)) {
      this.#at(this.#anywhere(), () => this.#stringHere());
      return 'any';
    }
    if (f.values) {
      const ok = f.values.filter((v) => satisfies(this.fl, v, { ...f, values: null }));
      this.#valuesHere(ok);
      return ok.length === 0 ? null : `(${ok.map((v) => quoted(writeJson(v))).join(' | ')})`;
    }
    const types = f.types ?? new Set(['null', 'boolean', 'object', 'array', 'number', 'string']);
    for (const t of types) if (!['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'].includes(t)) throw new SchemaRefusal(f.at['type'] ?? [], `${JSON.stringify(t)} is not a JSON-schema type`);
    const parts: (string | null)[] = [];
    if (types.has('null')) parts.push('"null"');
    if (types.has('boolean')) parts.push('("true" | "false")');
    if (types.has('number') || types.has('integer')) parts.push(this.number(f, !types.has('number')));
    if (types.has('string')) parts.push(this.string(f));
    if (types.has('array')) parts.push(this.array(f));
    if (types.has('object')) parts.push(this.object(f));
    const live = parts.filter((p): p is string => p !== null);
    return live.length === 0 ? null : live.length === 1 ? live[0]! : `(${live.join(' | ')})`;
  }

  lang(l: Lang | null, prefix: string): string | null {
    if (l === null) return null;
    return 'regex' in l ? regexExpr(l.regex) : dfaRules(l.dfa, this.g, prefix);
  }

  number(f: Flat, integer: boolean): string | null {
    const lo = tightest(f.lo, true);
    const hi = tightest(f.hi, false);
    const test = f.multipleOf.length > 0 ? multipleTest(f.multipleOf.map((m) => m.value)) : null;
    if (integer || (test !== null && test.places === 0)) {
      let ilo = lo === null ? null : BigInt(lo.exclusive ? Math.floor(lo.value) + 1 : Math.ceil(lo.value));
      let ihi = hi === null ? null : BigInt(hi.exclusive ? Math.ceil(hi.value) - 1 : Math.floor(hi.value));
      if (test === null) return lo === null && hi === null ? INTEGER : this.lang(mapLang(integerRange(ilo, ihi)), 'int');
      // Multiples are written within ±(2^53 − 1), where a double holds every integer exactly.
      ilo = ilo === null || ilo < -SAFE ? -SAFE : ilo;
      ihi = ihi === null || ihi > SAFE ? SAFE : ihi;
      // An integer x is a multiple of every d_i when x · 10^K is divisible by the modulus: x by modulus / gcd(modulus, 10^K).
      const k = test.modulus / gcd(test.modulus, 10n ** BigInt(test.places));
      return this.multiples(f, () => integerMultiples(k, ilo, ihi));
    }
    if (test !== null) {
      // Decimal multiples (0.01, 1.5…), exact as JSON Schema defines them, within the range.
      const range = numberRange(lo, hi);
      if (range === null) throw noNumberIn(f);
      return this.multiples(f, () => decimalMultiples(f.multipleOf.map((m) => m.value), range));
    }
    if (lo === null && hi === null) return 'jnumber';
    const range = numberRange(lo, hi);
    // Bounds that cross leave no number at all (the type's branch is empty); bounds too close for 12 decimals are refused.
    if (range === null && (lo === null || hi === null || lo.value < hi.value)) throw noNumberIn(f);
    return this.lang(range, 'num');
  }

  /** The multiples `make` writes, a refusal named at the schema's `multipleOf`. */
  multiples(f: Flat, make: () => Lang | null): string | null {
    try {
      return this.lang(make(), 'mul');
    } catch (e) {
      if (e instanceof SchemaRefusal) throw e.under(f.multipleOf[0]!.path);
      throw e;
    }
  }

  /** Where constant values stand: their strings here, the strings inside them below. */
  #valuesHere(values: readonly unknown[]): void {
    if (values.some((v) => typeof v === 'string')) this.#stringHere();
    if (values.some((v) => typeof v === 'object' && v !== null)) this.#at(this.#anywhere(), () => this.#stringHere());
  }

  string(f: Flat): string | null {
    let guard: number | null = null;
    // One number a string, however often it asks (the same in every pass).
    const n = this.#asked++;
    const keep = (dfa: Dfa, max: number) => {
      if (this.inGrammar === null || this.inGrammar.has(n)) return false;
      guard = this.#guards.push({ n, dfa, max, same: JSON.stringify([max, dfa]) }) - 1;
      return true;
    };
    const content = stringContent(f, this.g, 'jchar', 'jtext', keep);
    if (content === null) return null;
    this.#stringHere(guard);
    return `("\\"" ${content} "\\"")`;
  }

  array(f: Flat): string | null {
    const k = f.prefix.length;
    if (k === 0 && f.items === null && f.minItems === 0 && f.maxItems === null && f.unique === null) {
      this.#at(this.#anywhere(), () => this.#stringHere());
      return 'anyarr';
    }
    const restSubs = f.items ?? (k > 0 ? [{ schema: false, path: [] }] : [{ schema: true, path: [] }]);
    const rest = restSubs.some((s) => s.schema === false) ? null : this.value(restSubs, ['items']);
    let max = f.maxItems;
    const prefix: string[] = [];
    for (let i = 0; i < k; i++) {
      const e = this.value(f.prefix[i]!, ['item', i]);
      if (e === null) {
        max = max === null ? i : Math.min(max, i);
        break;
      }
      prefix.push(e);
    }
    if (rest === null) max = max === null ? prefix.length : Math.min(max, prefix.length);
    const min = f.minItems;
    if (max !== null && min > max) return null;
    if (f.unique && (max === null || max > 1)) return this.uniqueArray(f, restSubs, min, max);
    const itemAt = (i: number) => (i < prefix.length ? prefix[i]! : rest!);
    const L = Math.max(prefix.length, min);
    // Past L items, every item is `rest`: a repetition.
    let tail: string;
    const left = max === null ? null : max - L;
    if (rest === null || left === 0) tail = '""';
    else {
      const more = left === null ? `(${SEP} ${rest})*` : left === 1 ? '""' : `(${SEP} ${rest}){0,${left - 1}}`;
      tail = L === 0 ? `("" | ${rest} ${more})` : `("" | ${SEP} ${rest} ${more})`;
    }
    let body = tail;
    for (let i = L - 1; i >= 0; i--) {
      const step = `${i === 0 ? '' : `${SEP} `}${itemAt(i)} ${body}`;
      body = i >= min ? `("" | ${step})` : `(${step})`;
    }
    return `("[" ${body} "]")`;
  }

  uniqueArray(f: Flat, itemSubs: Sub[], min: number, max: number | null): string | null {
    if (f.prefix.length > 0) throw new SchemaRefusal(f.unique!, 'unique items are enforced only without prefixItems');
    const domain = finiteDomain(this.fl, itemSubs, new SchemaRefusal(f.unique!, "unique items are enforced only where the items' values are few and known (an enum, const, boolean or null; at most 32)"));
    const top = Math.min(max ?? domain.length, domain.length);
    if (min > top) return null;
    this.#valuesHere(domain);
    const lits = domain.map((v) => quoted(writeJson(v)));
    // after[j][c]: having written c items, the last of them domain[j]; items follow in the domain's order.
    const names = domain.map(() => new Array<string>(top + 1));
    for (let c = top; c >= 1; c--) {
      for (let j = domain.length - 1; j >= 0; j--) {
        const alts = c >= min ? ['""'] : [];
        if (c < top) for (let t = j + 1; t < domain.length; t++) alts.push(`${SEP} ${lits[t]} ${names[t]![c + 1]}`);
        names[j]![c] = this.g.rule('uniq', alts.length ? alts.join(' | ') : '""');
        if (alts.length === 0) names[j]![c] = '';
      }
    }
    const first = domain.map((_, t) => names[t]![1]).map((n, t) => (n ? `${lits[t]} ${n}` : '')).filter(Boolean);
    const alts = [...(min === 0 ? ['""'] : []), ...first];
    return alts.length === 0 ? null : `("[" (${alts.join(' | ')}) "]")`;
  }

  object(f: Flat): string | null {
    if (f.properties.size === 0 && f.at['properties'] === undefined && f.required.size === 0 && f.additional === null && f.patternProperties.length === 0 && f.propertyNames.length === 0 && f.minProperties === 0 && f.maxProperties === null) {
      this.#at(this.#anywhere(), () => this.#stringHere());
      return 'anyobj';
    }
    const names = [...f.properties.keys()];
    for (const r of f.required) if (!f.properties.has(r)) names.push(r);
    const nameOk = (n: string) => f.propertyNames.length === 0 || satisfiesSubs(this.fl, n, f.propertyNames);
    const entries: { name: string; value: string | null; required: boolean }[] = names.map((name) => {
      const listed = f.properties.get(name);
      const subs = listed ? [...listed, ...f.patternProperties.filter((p) => new RegExp(p.source, 'u').test(name)).flatMap((p) => p.subs)] : extrasFor(f, name);
      const value = nameOk(name) ? this.#at(this.#member(name), () => this.value(subs, ['prop', name])) : null;
      return { name, value, required: f.required.has(name) };
    });
    if (entries.some((e) => e.required && e.value === null)) return null;
    const extra = this.extraEntry(f, names);
    const min = f.minProperties;
    const max = f.maxProperties;
    const writable = entries.filter((e) => e.value !== null).length;
    if (min > writable) {
      throw new SchemaRefusal(f.at['minProperties'] ?? [], `${min} properties are asked for, and only the ${writable} listed ones can be counted: additional property names could repeat, which JSON parsing folds into one`);
    }
    const cap = Math.max(1, max ?? min);
    const memo = new Map<string, string | null>();
    const at = (i: number, c: number): string | null => {
      const key = `${i},${c}`;
      if (memo.has(key)) return memo.get(key)!;
      memo.set(key, null);
      const alts: string[] = [];
      const sep = c === 0 ? '' : `${SEP} `;
      if (i === entries.length) {
        if (c >= min) alts.push('""');
        if (extra !== null && (max === null || c < max)) {
          const more = max === null ? `(${SEP} ${extra})*` : max - c - 1 > 0 ? `(${SEP} ${extra}){0,${max - c - 1}}` : '""';
          if (c >= min) alts.push(`${sep}${extra} ${more}`);
        }
      } else {
        const e = entries[i]!;
        if (!e.required) {
          const skip = at(i + 1, c);
          if (skip !== null) alts.push(skip);
        }
        if (e.value !== null && (max === null || c < max)) {
          const next = at(i + 1, Math.min(c + 1, cap));
          if (next !== null) alts.push(`${sep}${quoted(JSON.stringify(e.name))} ${COLON} ${e.value} ${next}`);
        }
      }
      const out = alts.length === 0 ? null : this.g.rule('obj', alts.join(' | '));
      memo.set(key, out);
      return out;
    };
    const body = at(0, 0);
    return body === null ? null : `("{" ${body} "}")`;
  }

  /** One property beyond the listed ones (key, ": ", value), or null when none may be written. */
  extraEntry(f: Flat, listed: string[]): string | null {
    const additionalGiven = f.additional !== null;
    const additionalFalse = f.additional?.some((s) => s.schema === false) ?? false;
    // Policy: a schema that declares `properties` (or patternProperties) and no additionalProperties gets no other members.
    const anyMembers = !additionalGiven && f.at['properties'] === undefined && f.patternProperties.length === 0;
    const names = this.nameLanguage(f);
    const others = listed.length > 0 ? complement(regexDfa(alt(...listed.map(lit)))) : null;
    const restrict = (d: Dfa | null) => [d, names, others].filter((x): x is Dfa => x !== null).reduce((a, b) => intersect(a, b));
    const alts: string[] = [];
    const patterns = f.patternProperties.map((p) => ({ ...p, dfa: regexDfa(parsePattern(p.source)) }));
    for (let i = 0; i < patterns.length; i++) for (let j = i + 1; j < patterns.length; j++) {
      if (intersect(patterns[i]!.dfa, patterns[j]!.dfa).accept.length > 0) throw new SchemaRefusal(patterns[j]!.path, 'patternProperties whose patterns overlap cannot be enforced (a name matching both must satisfy both); make the patterns disjoint');
    }
    const entry = (keyDfa: Dfa, subs: Sub[], what: string) => {
      const value = this.#at(this.#member({ except: listed }), () => this.value(subs, [what]));
      if (value === null || keyDfa.accept.length === 0) return;
      const key = dfaRules(keyDfa, this.g, 'key');
      if (key !== null) alts.push(`"\\"" ${key} "\\"" ${COLON} ${value}`);
    };
    for (const p of patterns) entry(restrict(p.dfa), p.subs, 'pattern');
    if ((additionalGiven && !additionalFalse) || anyMembers) {
      const subs = f.additional ?? [];
      if (patterns.length === 0 && names === null && others === null) {
        const value = this.#at(this.#member({ except: [] }), () => this.value(subs.length ? subs : [{ schema: true, path: [] }], ['additional']));
        if (value !== null) alts.push(`jstring ${COLON} ${value}`);
      } else {
        const notPatterns = patterns.length > 0 ? complement(patterns.map((p) => p.dfa).reduce((a, b) => union2(a, b))) : regexDfa(parsePattern(''));
        entry(restrict(notPatterns), subs.length ? subs : [{ schema: true, path: [] }], 'additional');
      }
    }
    return alts.length === 0 ? null : this.g.rule('extra', alts.join(' | '));
  }

  /** The property names `propertyNames` allows, as an automaton; null: any name. */
  nameLanguage(f: Flat): Dfa | null {
    if (f.propertyNames.length === 0) return null;
    let flats = [anyFlat()];
    for (const s of f.propertyNames) flats = this.fl.cross(flats, this.fl.expand(s), s.path);
    const where = f.propertyNames[0]!.path;
    const dfas: Dfa[] = [];
    for (const g of flats) {
      if (g.ref) throw new SchemaRefusal(where, 'propertyNames is enforced where it is a string schema written in place (no $ref)');
      if (g.types && !g.types.has('string')) continue;
      if (g.values) {
        const ok = g.values.filter((v): v is string => typeof v === 'string' && satisfies(this.fl, v, { ...g, values: null }));
        if (ok.length) dfas.push(regexDfa(alt(...ok.map(lit))));
        continue;
      }
      let d = regexDfa(parsePattern(''));
      for (const p of stringParts(g)) d = intersect(d, regexDfa(p.regex));
      if (g.minLength > 0 || g.maxLength !== null) d = lengthLimited(d, g);
      dfas.push(d);
    }
    if (dfas.length === 0) return { accept: [], edges: [] };
    return dfas.reduce((a, b) => union2(a, b));
  }
}

function lengthLimited(d: Dfa, g: Flat): Dfa {
  return intersect(d, regexDfa(lengthRegex(g.minLength, g.maxLength)));
}
function lengthRegex(min: number, max: number | null): Regex {
  return { t: 'rep', node: { t: 'set', set: [[0, 0xd7ff], [0xe000, 0x10ffff]] }, min, max };
}

/** a ∪ b, as complement(¬a ∩ ¬b). */
function union2(a: Dfa, b: Dfa): Dfa {
  return complement(intersect(complement(a), complement(b)));
}

function mapLang(r: Regex | null): Lang | null {
  return r === null ? null : { regex: r };
}

/** The tightest of several bounds (lower: the largest; at equal values the exclusive one). */
function tightest(bounds: Bound[], lower: boolean): Bound | null {
  let best: Bound | null = null;
  for (const b of bounds) {
    if (best === null) best = b;
    else if (lower ? b.value > best.value : b.value < best.value) best = b;
    else if (b.value === best.value && b.exclusive) best = b;
  }
  return best;
}

function nameFor(path: Path): string {
  const last = path.filter((p) => typeof p === 'string').pop();
  return typeof last === 'string' && /^[a-zA-Z][a-zA-Z0-9_]{0,20}$/.test(last) ? `v_${last}` : 'v';
}

/** The refusal of a number range that no number written with at most 12 decimals lies in, at its bound's keyword. */
function noNumberIn(f: Flat): SchemaRefusal {
  const where = f.at['maximum'] ?? f.at['exclusiveMaximum'] ?? f.at['minimum'] ?? f.at['exclusiveMinimum'] ?? [];
  return new SchemaRefusal(where, 'no number written with at most 12 decimals lies in this range (bounds are rounded inward to 12 decimals)');
}
