/**
 * A map whose keys the caller chooses (question keys, choice option keys). zod's record drops a
 * `__proto__` key silently, so the raw object is checked first: it must be a plain object (not
 * an array), hold `min`..`max` entries (counted before any value is parsed, so 10,000 entries
 * fail fast), and its keys must be non-empty, at most `limits.maxKeyChars` long, and not
 * `__proto__` (rejected: it could not round-trip through plain objects on the way back).
 * Other keys, `constructor` included, are ordinary keys.
 */
import './zod-config.ts';
import { z } from 'zod';
import { limits } from './limits.ts';
import { addIssue, isPlainObject, lengthBetween } from './validation.ts';

export interface KeyedRecordOptions {
  min: number;
  max: number;
  /** What an entry is called in messages: "questions", "options". */
  noun: string;
  /** What the object is, for a type error: "an object mapping question keys to questions". */
  expected: string;
}

export function keyedRecord<V extends z.ZodType>(value: V, opts: KeyedRecordOptions) {
  return z
    .custom<Record<string, z.input<V>>>()
    .superRefine((raw: unknown, ctx) => {
      if (raw === undefined) return addIssue(ctx, 'required', []);
      if (!isPlainObject(raw)) return addIssue(ctx, 'wrongType', [opts.expected, raw]);
      const keys = Object.keys(raw);
      if (!lengthBetween(ctx, keys.length, opts.min, opts.max, opts.noun)) return;
      for (const key of keys) {
        if (key === '') addIssue(ctx, 'emptyKey', [opts.noun.replace(/s$/, '')], { path: [key] });
        else if (key.length > limits.maxKeyChars) addIssue(ctx, 'keyTooLong', [limits.maxKeyChars, key.length]);
        else if (key === '__proto__') addIssue(ctx, 'reservedKey', [], { path: [key] });
      }
    })
    // The cast only drops zod's Partial<> for optional value schemas (ours are never optional).
    .pipe(z.record(z.string(), value) as unknown as z.ZodType<Record<string, z.output<V>>, Record<string, z.input<V>>>);
}
