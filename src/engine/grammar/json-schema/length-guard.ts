/**
 * A length bound kept by the matcher instead of the grammar: a string whose `maxLength` stands
 * beside an unbounded pattern or format (zod's `z.email().max(100)`, Pydantic's `HttpUrl`: format
 * uri, maxLength 2083). Intersected exactly, the bound multiplies the pattern's automaton by every
 * length up to it: thousands of states, which xgrammar compiles in 10–54 s (docs/structured-output.md).
 * Instead the grammar holds the pattern (and any minLength), and the matcher rules out each token
 * after which the string could no longer end within `max` characters (../length-guard-tracker.ts):
 * the same language, exactly.
 *
 * Where a guard applies is read from the reply's text: the key of the innermost object member the
 * string is the value of (through arrays), or the root. The compiler gives a string a guard only
 * where no other string of the schema can stand under the same key (json-schema/compile.ts);
 * elsewhere the bound stays in the grammar.
 */
import type { Dfa } from './char-automaton.ts';

export interface LengthGuard {
  /** The places (`keyPlace`, `ROOT_PLACE`) where the guarded string stands. */
  places: string[];
  /** The string's language without the bound (its pattern, format and minLength): the grammar's. */
  dfa: Dfa;
  /** At most this many characters (code points). */
  max: number;
}

/** A string that is the root value, or an item of arrays at the root. */
export const ROOT_PLACE = '\u0000';
/** A string that is the value of the member named `key` (or an item of arrays there). */
export const keyPlace = (key: string): string => `k${key}`;
