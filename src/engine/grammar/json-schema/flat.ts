/**
 * A schema read as alternatives of flat constraints: `allOf` merged, `anyOf`/`oneOf` (each branch
 * with the schema's other keywords merged in), `$ref` followed, `dependentRequired` /
 * `dependentSchemas` / `dependencies` as "absent, or present with what it asks", and `if`/`then`/
 * `else` where the condition is decidable (types only). A Flat holds no combinator: each keyword
 * as a list of what every merged schema asked, property and item schemas kept as sub-schemas to be
 * compiled in their turn (recursion through `$ref` becomes a rule that calls itself).
 *
 * Drafts: 4, 6, 7, 2019-09, 2020-12 by the root's `$schema` (default 2020-12). Up to draft 7 a
 * `$ref` hides its siblings; draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` modify
 * `minimum`/`maximum`; an array `items` (any draft) is a tuple with `additionalItems`.
 */
import type { PathSegment } from '../../../contract/index.ts';
import { negatableNot, resolvePointer } from '../../../contract/index.ts';
import { isObject, jsonEqual, SCHEMA_TYPES, type SchemaType } from './json-value.ts';
import type { Bound } from './numeric.ts';
import { SchemaRefusal } from './refusal.ts';

export type Draft = 4 | 6 | 7 | 2019 | 2020;
export type Path = PathSegment[];
/** A sub-schema and where it is in the schema sent. */
export interface Sub {
  schema: unknown;
  path: Path;
}

export interface Flat {
  /** Allowed types; null: any. */
  types: Set<SchemaType> | null;
  /** The values allowed (enum and const); null: any. */
  values: unknown[] | null;
  /** A reference to compile as a rule of its own (nothing else constrains this alternative). */
  ref: { pointer: string; path: Path } | null;
  lo: Bound[];
  hi: Bound[];
  multipleOf: { value: number; path: Path }[];
  minLength: number;
  maxLength: number | null;
  patterns: { source: string; path: Path }[];
  formats: { name: string; path: Path }[];
  properties: Map<string, Sub[]>;
  required: Set<string>;
  /** additionalProperties of each merged schema; null: none given. */
  additional: Sub[] | null;
  patternProperties: { source: string; subs: Sub[]; path: Path }[];
  propertyNames: Sub[];
  minProperties: number;
  maxProperties: number | null;
  prefix: Sub[][];
  /** Items past the prefix; null: none given. */
  items: Sub[] | null;
  minItems: number;
  maxItems: number | null;
  unique: Path | null;
  /** Where keywords came from, for refusals (the first schema that gave each). */
  at: Record<string, Path>;
}

export const MAX_ALTERNATIVES = 64;

export function anyFlat(): Flat {
  return {
    types: null, values: null, ref: null, lo: [], hi: [], multipleOf: [], minLength: 0, maxLength: null, patterns: [], formats: [],
    properties: new Map(), required: new Set(), additional: null, patternProperties: [], propertyNames: [], minProperties: 0, maxProperties: null,
    prefix: [], items: null, minItems: 0, maxItems: null, unique: null, at: {},
  };
}

export function draftOf(root: unknown): Draft {
  const uri = isObject(root) && typeof root['$schema'] === 'string' ? root['$schema'] : '';
  if (/draft-04/.test(uri)) return 4;
  if (/draft-06/.test(uri)) return 6;
  if (/draft-07/.test(uri)) return 7;
  if (/2019-09/.test(uri)) return 2019;
  return 2020;
}

const INT32: [number, number] = [-2147483648, 2147483647];
const INT64: [number, number] = [-9223372036854775807, 9223372036854775807];

export class Flattener {
  readonly draft: Draft;
  readonly #inlining = new Set<string>();
  constructor(readonly root: unknown) {
    this.draft = draftOf(root);
  }

  /** The alternatives of `sub` (none: no value is valid). */
  expand(sub: Sub): Flat[] {
    const s = sub.schema;
    if (s === true) return [anyFlat()];
    if (s === false) return [];
    if (!isObject(s)) throw new SchemaRefusal(sub.path, 'a schema must be an object or a boolean');
    const at = (...k: PathSegment[]) => [...sub.path, ...k];
    if (typeof s['$ref'] === 'string' && this.draft <= 7) return [this.refFlat(s['$ref'], at('$ref'))];
    let alts = [this.own(s, sub.path)];
    if (typeof s['$ref'] === 'string') alts = this.cross(alts, [this.refFlat(s['$ref'], at('$ref'))], at('$ref'));
    if (Array.isArray(s['allOf'])) s['allOf'].forEach((x, i) => (alts = this.cross(alts, this.expand({ schema: x, path: at('allOf', i) }), at('allOf', i))));
    if (Array.isArray(s['anyOf'])) alts = this.cross(alts, s['anyOf'].flatMap((x, i) => this.expand({ schema: x, path: at('anyOf', i) })), at('anyOf'));
    if (Array.isArray(s['oneOf'])) {
      const raw = s['oneOf'].map((x, i) => this.expand({ schema: x, path: at('oneOf', i) }));
      const branches = raw.map((r, i) => this.cross(alts, r, at('oneOf', i)));
      this.exclusive(branches, raw, at('oneOf'));
      for (let i = 0; i < branches.length; i++) for (let j = i + 1; j < branches.length; j++) {
        for (const f of branches[i]!) for (const g of branches[j]!) {
          if (!this.disjoint(f, g)) throw new SchemaRefusal(at('oneOf'), `branches ${i} and ${j} may both match one value, and exactly one must: oneOf is enforced where its branches are disjoint (by type, const or enum, or a required property's const); use anyOf if either may match`);
        }
      }
      alts = this.cap(branches.flat(), at('oneOf'));
    }
    if ('if' in s && ('then' in s || 'else' in s)) alts = this.conditional(s, alts, sub.path);
    if ('not' in s) alts = this.cross(alts, negation(s['not'], at('not')), at('not'));
    for (const key of ['dependentRequired', 'dependentSchemas', 'dependencies']) {
      const deps = s[key];
      if (!isObject(deps)) continue;
      for (const [name, dep] of Object.entries(deps)) {
        const absent = anyFlat();
        absent.properties.set(name, [{ schema: false, path: at(key, name) }]);
        let present = [anyFlat()];
        present[0]!.required.add(name);
        if (Array.isArray(dep)) for (const d of dep) present[0]!.required.add(String(d));
        else present = this.cross(present, this.expand({ schema: dep, path: at(key, name) }), at(key, name));
        alts = this.cross(alts, [absent, ...present], at(key, name));
      }
    }
    return alts;
  }

  /**
   * oneOf branches that may overlap made disjoint where each names `required` properties: a
   * branch is written only where one of each other branch's required names is absent (each such
   * name an alternative), so a value written for one branch fails the other (JSON Schema's
   * "exactly one"). Fewer values than the schema allows (one that has all of another branch's
   * names but fails that branch otherwise is valid and not written), never an invalid one.
   * Branches without required names are left as they are (the caller refuses them if they overlap).
   */
  exclusive(branches: Flat[][], raw: Flat[][], path: Path): void {
    const negation = (r: Flat[], j: number): Flat[] | null => {
      if (r.length === 0 || r.some((f) => f.ref)) return null;
      const names = [...r[0]!.required].filter((n) => r.every((f) => f.required.has(n)));
      if (names.length === 0) return null;
      return names.map((name) => {
        const absent = anyFlat();
        absent.properties.set(name, [{ schema: false, path: [...path, j, 'required'] }]);
        return absent;
      });
    };
    const overlapping = (i: number, j: number) => branches[i]!.some((f) => branches[j]!.some((g) => !this.disjoint(f, g)));
    const without: number[][] = branches.map(() => []);
    for (let i = 0; i < branches.length; i++) for (let j = i + 1; j < branches.length; j++) {
      if (!negation(raw[i]!, i) || !negation(raw[j]!, j) || !overlapping(i, j)) continue;
      without[i]!.push(j);
      without[j]!.push(i);
    }
    for (let i = 0; i < branches.length; i++) for (const j of without[i]!) branches[i] = this.cross(branches[i]!, negation(raw[j]!, j)!, [...path, i]);
  }

  /** if/then/else, where `if` constrains types only: (if ∧ then) ∨ (¬if ∧ else). */
  conditional(s: Record<string, unknown>, alts: Flat[], path: Path): Flat[] {
    const cond = this.expand({ schema: s['if'], path: [...path, 'if'] });
    const typeOnly = (f: Flat) => JSON.stringify({ ...f, types: null, at: {} }, (_, v) => (v instanceof Set ? [...v] : v instanceof Map ? [...v] : v)) === JSON.stringify({ ...anyFlat(), at: {} }, (_, v) => (v instanceof Set ? [...v] : v instanceof Map ? [...v] : v));
    if (!cond.every(typeOnly)) throw new SchemaRefusal([...path, 'if'], 'a condition is enforced only where it asks for types ("type"); write the cases as anyOf');
    const yes = new Set<SchemaType>();
    for (const f of cond) for (const t of f.types ?? SCHEMA_TYPES) yes.add(t);
    if (yes.has('number')) yes.add('integer');
    const no = new Set(SCHEMA_TYPES.filter((t) => !yes.has(t)));
    const onTypes = (types: Set<SchemaType>, key: string) => {
      const base = anyFlat();
      base.types = types;
      const branch = key in s ? this.expand({ schema: s[key], path: [...path, key] }) : [anyFlat()];
      return this.cross([base], branch, [...path, key]);
    };
    return this.cross(alts, [...onTypes(yes, 'then'), ...onTypes(no, 'else')], [...path, 'if']);
  }

  refFlat(pointer: string, path: Path): Flat {
    const f = anyFlat();
    f.ref = { pointer, path };
    return f;
  }

  /** The target of a reference, expanded (a recursive reference beside other keywords is refused). */
  inline(ref: { pointer: string; path: Path }): Flat[] {
    if (this.#inlining.has(ref.pointer)) throw new SchemaRefusal(ref.path, 'a recursive reference is enforced only alone in its schema (with annotations), not merged with other keywords');
    const target = resolvePointer(this.root, ref.pointer);
    if (target === undefined) throw new SchemaRefusal(ref.path, `the reference ${ref.pointer} names no schema`);
    this.#inlining.add(ref.pointer);
    try {
      return this.expand({ schema: target, path: pointerPath(ref.pointer) });
    } finally {
      this.#inlining.delete(ref.pointer);
    }
  }

  cap(alts: Flat[], path: Path): Flat[] {
    if (alts.length > MAX_ALTERNATIVES) throw new SchemaRefusal(path, `it makes ${alts.length} alternatives once merged with its neighbours, at most ${MAX_ALTERNATIVES} are compiled`);
    return alts;
  }

  cross(as: Flat[], bs: Flat[], path: Path): Flat[] {
    const out: Flat[] = [];
    for (const a of as) for (const b of bs) {
      if (out.length > MAX_ALTERNATIVES) this.cap(out, path);
      out.push(...this.merge(a, b, path));
    }
    return this.cap(out, path);
  }

  /** The alternatives of a ∧ b (none, one, or several where a reference was inlined). */
  merge(a: Flat, b: Flat, path: Path): Flat[] {
    if (a.ref && isAny(b)) return [a];
    if (b.ref && isAny(a)) return [b];
    if (a.ref) return this.cross(this.inline(a.ref), [b], path);
    if (b.ref) return this.cross([a], this.inline(b.ref), path);
    const m = mergeFlats(a, b, path);
    return m ? [m] : [];
  }

  /** Whether no value can satisfy both f and g (decided by type, values, and required properties' values). */
  disjoint(f: Flat, g: Flat): boolean {
    if (f.ref || g.ref) return this.disjointAll(f.ref ? this.inline(f.ref) : [f], g.ref ? this.inline(g.ref) : [g]);
    const types = intersectTypes(f.types, g.types);
    if (types !== null && types.size === 0) return true;
    if (f.values && g.values) return !f.values.some((v) => g.values!.some((w) => jsonEqual(v, w)));
    if (types !== null && [...types].every((t) => t === 'object')) {
      for (const name of f.required) {
        if (!g.required.has(name)) {
          if (forbids(g, name)) return true;
          continue;
        }
        const fv = this.literalValues(f.properties.get(name));
        const gv = this.literalValues(g.properties.get(name));
        if (fv && gv && !fv.some((v) => gv.some((w) => jsonEqual(v, w)))) return true;
      }
      for (const name of g.required) if (!f.required.has(name) && forbids(f, name)) return true;
    }
    return false;
  }

  disjointAll(fs: Flat[], gs: Flat[]): boolean {
    return fs.every((f) => gs.every((g) => this.disjoint(f, g)));
  }

  /** The values a property's schemas allow, where they are a finite list. */
  literalValues(subs: Sub[] | undefined): unknown[] | null {
    if (!subs) return null;
    let flats = [anyFlat()];
    for (const s of subs) flats = this.cross(flats, this.expand(s), s.path);
    if (flats.some((f) => f.ref)) return null;
    if (!flats.every((f) => f.values)) return null;
    return flats.flatMap((f) => f.values!);
  }

  /** The flat constraints of a schema's own keywords (no combinators). */
  own(s: Record<string, unknown>, path: Path): Flat {
    const f = anyFlat();
    const at = (k: string) => [...path, k];
    const note = (k: string) => (f.at[k] = at(k));
    if (s['type'] !== undefined) note('type');
    if (s['type'] !== undefined) f.types = new Set((typeof s['type'] === 'string' ? [s['type']] : (s['type'] as string[])) as SchemaType[]);
    if (Array.isArray(s['enum'])) (f.values = [...s['enum']]), note('enum');
    if ('const' in s) (f.values = f.values ? f.values.filter((v) => jsonEqual(v, s['const'])) : [s['const']]), note('const');
    const num = (k: string) => (typeof s[k] === 'number' ? (s[k] as number) : null);
    for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) if (k in s) note(k);
    if (this.draft === 4) {
      if (num('minimum') !== null) f.lo.push({ value: num('minimum')!, exclusive: s['exclusiveMinimum'] === true });
      if (num('maximum') !== null) f.hi.push({ value: num('maximum')!, exclusive: s['exclusiveMaximum'] === true });
    } else {
      if (num('minimum') !== null) f.lo.push({ value: num('minimum')!, exclusive: false });
      if (num('maximum') !== null) f.hi.push({ value: num('maximum')!, exclusive: false });
    }
    if (num('exclusiveMinimum') !== null) f.lo.push({ value: num('exclusiveMinimum')!, exclusive: true });
    if (num('exclusiveMaximum') !== null) f.hi.push({ value: num('exclusiveMaximum')!, exclusive: true });
    if (num('multipleOf') !== null) f.multipleOf.push({ value: num('multipleOf')!, path: at('multipleOf') });
    if (num('minLength') !== null) f.minLength = num('minLength')!;
    if (num('maxLength') !== null) (f.maxLength = num('maxLength')), note('maxLength');
    if (typeof s['pattern'] === 'string') f.patterns.push({ source: s['pattern'], path: at('pattern') });
    if (typeof s['format'] === 'string') {
      const name = s['format'];
      if (name === 'int32' || name === 'int64') {
        const [lo, hi] = name === 'int32' ? INT32 : INT64;
        f.lo.push({ value: lo, exclusive: false });
        f.hi.push({ value: hi, exclusive: false });
      } else f.formats.push({ name, path: at('format') });
    }
    if (isObject(s['properties'])) {
      note('properties');
      for (const [k, v] of Object.entries(s['properties'])) f.properties.set(k, [{ schema: v, path: [...at('properties'), k] }]);
    }
    if (Array.isArray(s['required'])) for (const r of s['required']) f.required.add(String(r));
    if ('additionalProperties' in s) f.additional = [{ schema: s['additionalProperties'], path: at('additionalProperties') }];
    if (isObject(s['patternProperties'])) {
      for (const [source, v] of Object.entries(s['patternProperties'])) f.patternProperties.push({ source, subs: [{ schema: v, path: [...at('patternProperties'), source] }], path: [...at('patternProperties'), source] });
    }
    if ('propertyNames' in s) f.propertyNames.push({ schema: s['propertyNames'], path: at('propertyNames') });
    if (num('minProperties') !== null) (f.minProperties = num('minProperties')!), note('minProperties');
    if (num('maxProperties') !== null) (f.maxProperties = num('maxProperties')), note('maxProperties');
    if (Array.isArray(s['items'])) {
      f.prefix = s['items'].map((v, i) => [{ schema: v, path: [...at('items'), i] }]);
      if ('additionalItems' in s) f.items = [{ schema: s['additionalItems'], path: at('additionalItems') }];
    } else {
      if (Array.isArray(s['prefixItems'])) f.prefix = s['prefixItems'].map((v, i) => [{ schema: v, path: [...at('prefixItems'), i] }]);
      if ('items' in s) f.items = [{ schema: s['items'], path: at('items') }];
    }
    if (num('minItems') !== null) f.minItems = num('minItems')!;
    if (num('maxItems') !== null) f.maxItems = num('maxItems');
    if (s['uniqueItems'] === true) f.unique = at('uniqueItems');
    return f;
  }
}

/** The alternatives of `not` (contract/json-schema-subset.ts's `negatableNot`): none, any value, or an object lacking one of the names. */
function negation(value: unknown, path: Path): Flat[] {
  const n = negatableNot(value);
  if (n === null) throw new SchemaRefusal(path, 'a negation is enforced only of {} or of "required" names alone');
  if (n.kind !== 'lacking') return n.kind === 'nothing' ? [] : [anyFlat()];
  return n.names.map((name) => {
    const f = anyFlat();
    f.types = new Set(['object']);
    f.properties.set(name, [{ schema: false, path: [...path, 'required'] }]);
    return f;
  });
}

function pointerPath(pointer: string): Path {
  if (pointer === '#') return [];
  return pointer.slice(2).split('/').map((p) => decodeURIComponent(p).replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function isAny(f: Flat): boolean {
  return (
    f.types === null && f.values === null && f.ref === null && f.lo.length === 0 && f.hi.length === 0 && f.multipleOf.length === 0 && f.minLength === 0 && f.maxLength === null &&
    f.patterns.length === 0 && f.formats.length === 0 && f.properties.size === 0 && f.required.size === 0 && f.additional === null && f.patternProperties.length === 0 &&
    f.propertyNames.length === 0 && f.minProperties === 0 && f.maxProperties === null && f.prefix.length === 0 && f.items === null && f.minItems === 0 && f.maxItems === null && f.unique === null
  );
}

export function intersectTypes(a: Set<SchemaType> | null, b: Set<SchemaType> | null): Set<SchemaType> | null {
  if (a === null) return b;
  if (b === null) return a;
  const has = (s: Set<SchemaType>, t: SchemaType) => s.has(t) || (t === 'integer' && s.has('number'));
  return new Set(SCHEMA_TYPES.filter((t) => has(a, t) && has(b, t)).filter((t, _, all) => !(t === 'integer' && all.includes('number'))));
}

/** Whether `f` forbids property `name` (its schema false, or no extra properties allowed and `name` not listed). */
function forbids(f: Flat, name: string): boolean {
  const subs = f.properties.get(name);
  if (subs) return subs.some((s) => s.schema === false);
  if (f.patternProperties.some((p) => new RegExp(p.source, 'u').test(name))) return false;
  return f.additional !== null && f.additional.some((s) => s.schema === false);
}

/** Schemas a property `name` not listed in `f` must satisfy there. */
export function extrasFor(f: Flat, name: string): Sub[] {
  const matching = f.patternProperties.filter((p) => new RegExp(p.source, 'u').test(name));
  if (matching.length > 0) return matching.flatMap((p) => p.subs);
  return f.additional ?? [];
}

function mergeFlats(a: Flat, b: Flat, path: Path): Flat | null {
  const f = anyFlat();
  f.at = { ...b.at, ...a.at };
  f.types = intersectTypes(a.types, b.types);
  if (f.types !== null && f.types.size === 0) return null;
  f.values = a.values && b.values ? a.values.filter((v) => b.values!.some((w) => jsonEqual(v, w))) : (a.values ?? b.values);
  if (f.values !== null && f.values.length === 0) return null;
  f.lo = [...a.lo, ...b.lo];
  f.hi = [...a.hi, ...b.hi];
  f.multipleOf = [...a.multipleOf, ...b.multipleOf];
  f.minLength = Math.max(a.minLength, b.minLength);
  f.maxLength = a.maxLength === null ? b.maxLength : b.maxLength === null ? a.maxLength : Math.min(a.maxLength, b.maxLength);
  f.patterns = [...a.patterns, ...b.patterns];
  f.formats = [...a.formats, ...b.formats];
  if (a.patternProperties.length > 0 && b.patternProperties.length > 0) throw new SchemaRefusal([...path, 'patternProperties'], 'two merged schemas that both have patternProperties cannot be enforced together; merge the patterns into one schema');
  for (const name of [...a.properties.keys(), ...b.properties.keys()]) {
    if (f.properties.has(name)) continue;
    f.properties.set(name, [...(a.properties.get(name) ?? extrasFor(a, name)), ...(b.properties.get(name) ?? extrasFor(b, name))]);
  }
  f.required = new Set([...a.required, ...b.required]);
  f.additional = a.additional === null && b.additional === null ? null : [...(a.additional ?? []), ...(b.additional ?? [])];
  const [withPatterns, other] = a.patternProperties.length > 0 ? [a, b] : [b, a];
  f.patternProperties = withPatterns.patternProperties.map((p) => ({ ...p, subs: [...p.subs, ...(other.additional ?? [])] }));
  f.propertyNames = [...a.propertyNames, ...b.propertyNames];
  f.minProperties = Math.max(a.minProperties, b.minProperties);
  f.maxProperties = a.maxProperties === null ? b.maxProperties : b.maxProperties === null ? a.maxProperties : Math.min(a.maxProperties, b.maxProperties);
  const n = Math.max(a.prefix.length, b.prefix.length);
  const itemAt = (x: Flat, i: number) => x.prefix[i] ?? x.items ?? [];
  f.prefix = Array.from({ length: n }, (_, i) => [...itemAt(a, i), ...itemAt(b, i)]);
  // Past a prefix with no items given, the engine writes no more items (prefix-only arrays stay tuples).
  const tail = (x: Flat, i: number) => (x.items === null && x.prefix.length > 0 && i >= x.prefix.length ? [{ schema: false, path }] : []);
  f.items = a.items === null && b.items === null ? null : [...(a.items ?? tail(a, n)), ...(b.items ?? tail(b, n))];
  f.minItems = Math.max(a.minItems, b.minItems);
  f.maxItems = a.maxItems === null ? b.maxItems : b.maxItems === null ? a.maxItems : Math.min(a.maxItems, b.maxItems);
  f.unique = a.unique ?? b.unique;
  return f;
}
