/**
 * A length bound kept by the matcher instead of the grammar: a string whose `maxLength` stands
 * beside an unbounded pattern or format (zod's `z.email().max(100)`, Pydantic's `HttpUrl`: format
 * uri, maxLength 2083). Intersected exactly, the bound multiplies the pattern's automaton by every
 * length up to it: thousands of states, which xgrammar compiles in 10–54 s (docs/structured-output.md).
 * Instead the grammar holds the pattern (and any minLength), and the matcher rules out each token
 * after which the string could no longer end within `max` characters (../length-guard-tracker.ts):
 * the same language, exactly.
 *
 * Where a guard applies is read from the reply's text: the string's key path, the keys of the
 * object members it stands in from the root (arrays are transparent). The compiler gives a string a
 * guard only where no other string of the schema, bounded otherwise, can stand on the same path
 * (json-schema/compile.ts); elsewhere the bound stays in the grammar.
 */
import type { Dfa } from './char-automaton.ts';

/** A key on a path: that key, or any key but those listed (an additional property's). */
export type KeyStep = string | { except: string[] };

/** Key paths: `keys` from the root; `under`: that path or any below it. */
export interface GuardPlace {
  keys: KeyStep[];
  under: boolean;
}

function stepHolds(step: KeyStep, key: string): boolean {
  return typeof step === 'string' ? step === key : !step.except.includes(key);
}

function stepsMeet(a: KeyStep, b: KeyStep): boolean {
  if (typeof a === 'string') return stepHolds(b, a);
  if (typeof b === 'string') return stepHolds(a, b);
  return true;
}

export interface LengthGuard {
  /** The key paths where the guarded string stands. */
  places: GuardPlace[];
  /** The string's language without the bound (its pattern, format and minLength): the grammar's. */
  dfa: Dfa;
  /** At most this many characters (code points). */
  max: number;
}

/** A string that is the root value, or an item of arrays at the root. */
export const ROOT_PLACE: GuardPlace = { keys: [], under: false };

/** Whether a string on the key path `path` stands in `place`. */
export function placeHolds(place: GuardPlace, path: readonly string[]): boolean {
  if (place.under ? path.length < place.keys.length : path.length !== place.keys.length) return false;
  return place.keys.every((k, i) => stepHolds(k, path[i]!));
}

/** Whether some key path stands in both places. */
export function placesMeet(a: GuardPlace, b: GuardPlace): boolean {
  const n = Math.min(a.keys.length, b.keys.length);
  for (let i = 0; i < n; i++) if (!stepsMeet(a.keys[i]!, b.keys[i]!)) return false;
  if (a.keys.length === b.keys.length) return true;
  return (a.keys.length < b.keys.length ? a : b).under;
}

/**
 * The guards of the JSON texts in a reply: the whole reply's (`begin` null: a response format),
 * or, for tool calls, those of the arguments that follow each call's `begin`.
 */
export interface GuardScope {
  begin: string | null;
  guards: LengthGuard[];
}
