/**
 * A schema whose grammar takes far longer than any compile bound the stall drills set, on every
 * machine CI may run on: `count` patterns side by side, each of up to 200 words of up to 16
 * letters. xgrammar expands each counted repetition, so the compile grows linearly with `count`:
 * on tiny-random-llama3's 128k-token vocabulary on a quiet 2-core machine (xgrammar 0.1.27,
 * 2026-12-04, timed with the bound raised to 300 s), 1 pattern of 256 words took
 * 1.8 s, 16 took 31 s and 64 took 130 s, and none reached the grammar worker's memory bound. A
 * single pattern is not enough: it compiled within a 3 s bound on the landing CI's machine.
 * The compile is stopped at the bound, so the drill's own time does not grow with `count`.
 */
import type { JsonSchema } from '../../src/contract/index.ts';

/** Up to `n` words of up to 16 letters, each followed by "-". */
export const wordsPattern = (n: number): JsonSchema => ({ type: 'string', pattern: `^([a-z]{1,16}-){1,${n}}$` });

/** An object of `count` required word patterns, `w0`…, none heavier than the others (so none is named alone). */
export function wordPatterns(count: number): JsonSchema & { properties: Record<string, JsonSchema>; required: string[] } {
  const keys = Array.from({ length: count }, (_, i) => `w${i}`);
  return { type: 'object', properties: Object.fromEntries(keys.map((k, i) => [k, wordsPattern(200 - (i % 8))])), required: keys };
}

/** How many patterns the drills use: ~130 s of compile on a quiet machine, 13× the page's 10 s bound and 43× the unit test's 3 s. */
export const STALL_PATTERNS = 64;
