/**
 * The byte machines of the non-text value types (byte-automaton.ts):
 *
 * - number: `-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,d})?` with d = `decimals` (no fraction when 0 or
 *   `integer`); at most 15 integer digits, so every value is an exact double.
 * - duration: the same without the minus sign (non-negative).
 * - date: `YYYY-MM-DD`, a real calendar date (leap years exact: a year divisible by 4 and not by
 *   100, or by 400): every prefix the machine accepts still has a valid completion.
 * - time: `HH:MM` or `HH:MM:SS`, 00–23, 00–59, 00–59.
 * - datetime: a date, `T`, a time, then optionally `Z` or an offset `±HH:MM`.
 */
import { daysInMonth } from '../../contract/index.ts';
import type { ByteAutomaton } from './byte-automaton.ts';

const MAX_INT_DIGITS = 15;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

// Number states, packed: phase | intDigits << 3 | fracDigits << 8.
const P_START = 0; // nothing yet
const P_SIGN = 1; // after "-"
const P_INT = 2; // in non-zero-led integer digits
const P_ZERO = 3; // after a leading "0"
const P_POINT = 4; // after "."
const P_FRAC = 5; // in fraction digits
const pack = (phase: number, ints: number, fracs: number) => phase | (ints << 3) | (fracs << 8);

export function numberAutomaton(opts: { decimals: number; signed: boolean }): ByteAutomaton<number> {
  const decimals = opts.decimals;
  return {
    start: pack(P_START, 0, 0),
    step(s, b) {
      const phase = s & 7;
      const ints = (s >> 3) & 31;
      const fracs = s >> 8;
      switch (phase) {
        case P_START:
        case P_SIGN:
          if (b === 0x2d && phase === P_START && opts.signed) return pack(P_SIGN, 0, 0);
          if (b === 0x30) return pack(P_ZERO, 1, 0);
          if (isDigit(b)) return pack(P_INT, 1, 0);
          return null;
        case P_INT:
          if (isDigit(b)) return ints < MAX_INT_DIGITS ? pack(P_INT, ints + 1, 0) : null;
          if (b === 0x2e && decimals > 0) return pack(P_POINT, ints, 0);
          return null;
        case P_ZERO:
          if (b === 0x2e && decimals > 0) return pack(P_POINT, ints, 0);
          return null;
        case P_POINT:
        case P_FRAC:
          if (isDigit(b) && fracs < decimals) return pack(P_FRAC, ints, fracs + 1);
          return null;
        default:
          return null;
      }
    },
    accepts: (s) => {
      const phase = s & 7;
      return phase === P_INT || phase === P_ZERO || phase === P_FRAC;
    },
  };
}

/** Whether `p` (digits and dashes so far) is the start of a real YYYY-MM-DD date. */
function dateLive(p: string): boolean {
  const n = p.length;
  for (let i = 0; i < n; i++) {
    const c = p.charCodeAt(i);
    if (i === 4 || i === 7 ? c !== 0x2d : !isDigit(c)) return false;
  }
  if (n >= 6) {
    const m1 = p[5]!;
    if (m1 !== '0' && m1 !== '1') return false;
  }
  if (n >= 7) {
    const month = Number(p.slice(5, 7));
    if (month < 1 || month > 12) return false;
  }
  if (n >= 9) {
    const max = daysInMonth(Number(p.slice(0, 4)), Number(p.slice(5, 7)));
    const d1 = Number(p[8]);
    if (d1 * 10 > max) return false;
    if (n >= 10) {
      const day = Number(p.slice(8, 10));
      if (day < 1 || day > max) return false;
    }
  }
  return n <= 10;
}

/** Whether `p` is the start of `HH:MM` or `HH:MM:SS`. */
function timeLive(p: string): boolean {
  const n = p.length;
  if (n > 8) return false;
  for (let i = 0; i < n; i++) {
    const c = p.charCodeAt(i);
    if (i === 2 || i === 5 ? c !== 0x3a : !isDigit(c)) return false;
  }
  if (n >= 1 && p[0]! > '2') return false;
  if (n >= 2 && Number(p.slice(0, 2)) > 23) return false;
  if (n >= 4 && p[3]! > '5') return false;
  if (n >= 7 && p[6]! > '5') return false;
  return true;
}

/** A fixed-format machine whose states are the text so far. */
function textMachine(live: (p: string) => boolean, accepts: (p: string) => boolean): ByteAutomaton<string> {
  return {
    start: '',
    step: (s, b) => {
      if (b >= 0x80) return null;
      const next = s + String.fromCharCode(b);
      return live(next) ? next : null;
    },
    accepts,
  };
}

export const dateAutomaton: ByteAutomaton<string> = textMachine(dateLive, (p) => p.length === 10);
export const timeAutomaton: ByteAutomaton<string> = textMachine(timeLive, (p) => p.length === 5 || p.length === 8);

/** Whether `p` is the start of a datetime: date `T` time, then `Z` or `±HH:MM` optionally. */
function dateTimeLive(p: string): boolean {
  if (p.length <= 10) return dateLive(p);
  if (!dateLive(p.slice(0, 10)) || p[10] !== 'T') return false;
  const rest = p.slice(11);
  const zone = rest.search(/[Z+-]/);
  if (zone < 0) return timeLive(rest);
  const time = rest.slice(0, zone);
  if (time.length !== 5 && time.length !== 8) return false;
  if (!timeLive(time)) return false;
  const offset = rest.slice(zone);
  if (offset[0] === 'Z') return offset.length === 1;
  // ±HH:MM
  const o = offset.slice(1);
  return o.length <= 5 && timeLive(o);
}

function dateTimeAccepts(p: string): boolean {
  if (p.length < 16 || !dateTimeLive(p)) return false;
  const rest = p.slice(11);
  const zone = rest.search(/[Z+-]/);
  if (zone < 0) return rest.length === 5 || rest.length === 8;
  const offset = rest.slice(zone);
  return offset === 'Z' || offset.length === 6;
}

export const dateTimeAutomaton: ByteAutomaton<string> = textMachine(dateTimeLive, dateTimeAccepts);
