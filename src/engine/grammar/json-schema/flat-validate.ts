/**
 * Whether a JSON value satisfies a schema's alternatives: used where the compiler writes values
 * out one by one (an `enum` or `const` beside other keywords, a finite item domain for
 * `uniqueItems`, a listed property name under `propertyNames`), so that only values valid
 * against every keyword are written.
 */
import { FORMAT_PATTERNS } from '../format-patterns.ts';
import type { Flat, Flattener, Sub } from './flat.ts';
import { anyFlat, extrasFor } from './flat.ts';
import { codePoints, hasType, isObject, jsonEqual } from './json-value.ts';
import { SchemaRefusal } from './refusal.ts';
import { decimalOf, multipleTest } from './numeric.ts';

export function satisfiesSubs(fl: Flattener, value: unknown, subs: Sub[]): boolean {
  let flats = [anyFlat()];
  for (const s of subs) flats = fl.cross(flats, fl.expand(s), s.path);
  return flats.some((f) => satisfies(fl, value, f));
}

export function satisfies(fl: Flattener, value: unknown, f: Flat): boolean {
  if (f.ref) return fl.inline(f.ref).some((g) => satisfies(fl, value, g));
  if (f.types && ![...f.types].some((t) => hasType(value, t))) return false;
  if (f.values && !f.values.some((v) => jsonEqual(v, value))) return false;
  if (typeof value === 'number') {
    for (const b of f.lo) if (b.exclusive ? !(value > b.value) : !(value >= b.value)) return false;
    for (const b of f.hi) if (b.exclusive ? !(value < b.value) : !(value <= b.value)) return false;
    if (f.multipleOf.length > 0 && !isMultiple(value, f.multipleOf.map((m) => m.value))) return false;
  }
  if (typeof value === 'string') {
    const n = codePoints(value);
    if (n < f.minLength || (f.maxLength !== null && n > f.maxLength)) return false;
    for (const p of f.patterns) if (!new RegExp(p.source, 'u').test(value)) return false;
    for (const fm of f.formats) {
      const source = (FORMAT_PATTERNS as Record<string, string | undefined>)[fm.name];
      if (source && !new RegExp(source, 'u').test(value)) return false;
    }
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length < f.minProperties || (f.maxProperties !== null && keys.length > f.maxProperties)) return false;
    for (const r of f.required) if (!Object.hasOwn(value, r)) return false;
    for (const k of keys) {
      if (f.propertyNames.length > 0 && !satisfiesSubs(fl, k, f.propertyNames)) return false;
      const subs = [...(f.properties.get(k) ?? []), ...(f.properties.has(k) ? f.patternProperties.filter((p) => new RegExp(p.source, 'u').test(k)).flatMap((p) => p.subs) : extrasFor(f, k))];
      if (!satisfiesSubs(fl, value[k], subs)) return false;
    }
  }
  if (Array.isArray(value)) {
    if (value.length < f.minItems || (f.maxItems !== null && value.length > f.maxItems)) return false;
    for (let i = 0; i < value.length; i++) if (!satisfiesSubs(fl, value[i], f.prefix[i] ?? f.items ?? [])) return false;
    if (f.unique) for (let i = 0; i < value.length; i++) for (let j = i + 1; j < value.length; j++) if (jsonEqual(value[i], value[j])) return false;
  }
  return true;
}

/** The values a sub-schema allows, where they are few and known (enum, const, boolean, null); else a refusal at `where`. */
export function finiteDomain(fl: Flattener, subs: Sub[], where: SchemaRefusal, limit = 32): unknown[] {
  let flats = [anyFlat()];
  for (const s of subs) flats = fl.cross(flats, fl.expand(s), s.path);
  const out: unknown[] = [];
  for (const f of flats.flatMap((x) => (x.ref ? fl.inline(x.ref) : [x]))) {
    const candidates = f.values ?? ([...(f.types ?? [])].every((t) => t === 'null' || t === 'boolean') && f.types ? [...(f.types.has('null') ? [null] : []), ...(f.types.has('boolean') ? [false, true] : [])] : null);
    if (candidates === null) throw where;
    for (const v of candidates) if (satisfies(fl, v, f) && !out.some((w) => jsonEqual(v, w))) out.push(v);
  }
  if (out.length > limit) throw where;
  return out;
}

/** Whether `value` is a multiple of every one of `of`, in exact decimal arithmetic (numeric.ts' multipleTest), as JSON Schema defines multipleOf. */
export function isMultiple(value: number, of: readonly number[]): boolean {
  const { modulus, places } = multipleTest(of);
  const d = decimalOf(value);
  if (d.frac.length > places) return false;
  return BigInt(d.int + d.frac.padEnd(places, '0')) % modulus === 0n;
}
