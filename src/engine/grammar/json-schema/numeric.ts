/**
 * Numbers under bounds, at digit level (as llguidance builds them): the texts of the integers or
 * decimals in a range, one- or two-sided, of any size (±2^53 and past it), as a Regex over digits
 * (regex.ts); `multipleOf`, whole or decimal, as an automaton of remainders intersected with the range.
 *
 * Texts: integers `-?(0|[1-9][0-9]*)`, never `-0`; decimals `-?(0|[1-9][0-9]*)(\.[0-9]+)?`
 * (no exponent where a bound applies). Bounds are compared as exact decimals. A schema's bound is
 * a double; an exclusive bound becomes the inclusive bound of the next double inward (so that no
 * text parses to the bound itself), except at 0, where "positive" is written exactly. Every text
 * ≥ (≤) a double's shortest decimal parses to a double ≥ (≤) it: rounding is monotonic.
 */
import { intersect, regexDfa, type Dfa } from './char-automaton.ts';
import { SchemaRefusal } from './refusal.ts';
import { alt, EMPTY, lit, rep, seq, set, type Regex } from './regex.ts';

export type Lang = { regex: Regex } | { dfa: Dfa };

const D = set([[0x30, 0x39]]);
const digits = (lo: number, hi: number): Regex | null => (lo > hi ? null : set([[0x30 + lo, 0x30 + hi]]));
const opt = (...xs: (Regex | null)[]) => xs.filter((x): x is Regex => x !== null);
const altOf = (xs: (Regex | null)[]): Regex | null => {
  const ys = opt(...xs);
  return ys.length === 0 ? null : alt(...ys);
};

/** Equal-length digit strings from `x` to `y` (x ≤ y). */
function sameLength(x: string, y: string): Regex {
  if (x.length === 0) return EMPTY;
  if (x.length === 1) return digits(Number(x), Number(y))!;
  if (/^0*$/.test(x) && /^9*$/.test(y)) return rep(D, x.length, x.length);
  const a = Number(x[0]);
  const b = Number(y[0]);
  if (a === b) return seq(lit(x[0]!), sameLength(x.slice(1), y.slice(1)));
  const n = x.length - 1;
  // A first digit whose rest spans every n-digit string joins the middle: [1-9][0-9]{n}, not three branches.
  const lowFull = /^0*$/.test(x.slice(1));
  const highFull = /^9*$/.test(y.slice(1));
  const from = lowFull ? a : a + 1;
  const to = highFull ? b : b - 1;
  return alt(
    ...opt(
      lowFull ? null : seq(lit(x[0]!), sameLength(x.slice(1), '9'.repeat(n))),
      from <= to ? seq(digits(from, to)!, rep(D, n, n)) : null,
      highFull ? null : seq(lit(y[0]!), sameLength('0'.repeat(n), y.slice(1))),
    ),
  );
}

/** The texts of the non-negative integers from `a` to `b` (null: no end). */
function naturals(a: bigint, b: bigint | null): Regex | null {
  if (b !== null && a > b) return null;
  if (a === 0n) return altOf([lit('0'), b === 0n ? null : naturals(1n, b)]);
  const la = a.toString().length;
  const lb = b === null ? null : b.toString().length;
  const parts: Regex[] = [];
  // Lengths whose every number is in range, one after another, are one branch: [1-9][0-9]{m,n}.
  let full: [number, number] | null = null;
  const flush = () => {
    if (full) parts.push(seq(digits(1, 9)!, rep(D, full[0] - 1, full[1] - 1)));
    full = null;
  };
  for (let len = la; lb === null ? len === la : len <= lb; len++) {
    const lo = len === la ? a.toString() : `1${'0'.repeat(len - 1)}`;
    const hi = lb !== null && len === lb ? b!.toString() : '9'.repeat(len);
    if (/^10*$/.test(lo) && /^9+$/.test(hi)) {
      full = full ? [full[0], len] : [len, len];
      continue;
    }
    flush();
    parts.push(sameLength(lo, hi));
  }
  flush();
  if (lb === null) parts.push(seq(digits(1, 9)!, rep(D, la, null)));
  return alt(...parts);
}

/**
 * Digits a bound may have: a grammar nests one level per digit, and xgrammar 0.1.27's parser
 * crashes (wasm out of bounds) a few hundred levels down. Past ±(10^20 − 1) an upper bound is
 * lowered (a lower bound raised) to it: fewer values, still valid; a range wholly past it is refused.
 */
export const MAX_INT_DIGITS = 20;
const MAX_INT = 10n ** BigInt(MAX_INT_DIGITS) - 1n;
/** Fraction digits a non-integer bound keeps: rounded inward (a lower bound up, an upper bound down). */
export const MAX_FRACTION_DIGITS = 12;

function tooLarge(): never {
  throw new SchemaRefusal([], `a range wholly past ±(10^${MAX_INT_DIGITS} − 1) is not enforced`);
}

/** The texts of the integers in [lo, hi] (null: no bound); null when there is none. */
export function integerRange(lo: bigint | null, hi: bigint | null): Regex | null {
  if (lo !== null && hi !== null && lo > hi) return null;
  if ((lo !== null && lo > MAX_INT) || (hi !== null && hi < -MAX_INT)) tooLarge();
  if (lo !== null && lo < -MAX_INT) lo = -MAX_INT;
  if (hi !== null && hi > MAX_INT) hi = MAX_INT;
  const negative = lo === null || lo < 0n ? naturals(hi !== null && hi < 0n ? -hi : 1n, lo === null ? null : -lo) : null;
  const natural = hi === null || hi >= 0n ? naturals(lo !== null && lo > 0n ? lo : 0n, hi) : null;
  return altOf([negative && seq(lit('-'), negative), natural]);
}

/** Integers that are multiples of `k` (≥ 1) in [lo, hi]. */
export function integerMultiples(k: bigint, lo: bigint | null, hi: bigint | null): Lang | null {
  const range = integerRange(lo, hi);
  if (range === null) return null;
  if (k === 1n) return { regex: range };
  if (k > BigInt(MAX_MODULUS_STATES)) throw new SchemaRefusal([], `a multiple of ${k} needs ${k} automaton states (more than ${MAX_MODULUS_STATES}); use a smaller multipleOf`);
  // Remainders of the digits read so far: state 0 start, 1 after "-", 2 + r.
  const n = Number(k);
  const mod: Dfa = { accept: [false, false], edges: [[{ set: [[0x2d, 0x2d]], to: 1 }], []] };
  for (let r = 0; r < n; r++) (mod.accept.push(r === 0), mod.edges.push([]));
  for (const from of [0, 1]) for (let d = 0; d <= 9; d++) mod.edges[from]!.push({ set: [[0x30 + d, 0x30 + d]], to: 2 + (d % n) });
  for (let r = 0; r < n; r++) for (let d = 0; d <= 9; d++) mod.edges[2 + r]!.push({ set: [[0x30 + d, 0x30 + d]], to: 2 + ((r * 10 + d) % n) });
  const dfa = intersect(regexDfa(range), mod);
  return dfa.accept.length === 0 ? null : { dfa };
}

/**
 * `multipleOf` values as one integer test: a number x is a multiple of every d_i = m_i / 10^k_i
 * (m_i a whole number, the exact decimal of the schema's double) exactly when x · 10^K is a whole
 * number divisible by `modulus` = lcm(m_i · 10^(K − k_i)), K = max k_i. Decimal arithmetic, as JSON
 * Schema defines `multipleOf`, not floating-point division.
 */
export function multipleTest(values: readonly number[]): { modulus: bigint; places: number } {
  const ds = values.map((v) => decimalOf(v));
  const places = Math.max(0, ...ds.map((d) => d.frac.length));
  let modulus = 1n;
  for (const d of ds) {
    const m = BigInt(d.int + d.frac) * 10n ** BigInt(places - d.frac.length);
    modulus = (modulus / gcdOf(modulus, m)) * m;
  }
  return { modulus, places };
}

function gcdOf(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Remainders a multiple automaton may track: a state per remainder and fraction digit read. */
export const MAX_MODULUS_STATES = 20_000;

/**
 * The numbers in `range` (texts `-?int(.frac)?`) that are multiples of every value in `values`
 * (multipleTest): the range intersected with an automaton of the remainder, modulo `modulus`, of
 * the digits read so far and the count of fraction digits (at most `places`); a text is accepted
 * where its digits · 10^(places − fraction digits) ≡ 0. Written with at most `places` decimals.
 */
export function decimalMultiples(values: readonly number[], range: Lang): Lang | null {
  const { modulus, places } = multipleTest(values);
  const n = Number(modulus);
  if (n * (places + 1) > MAX_MODULUS_STATES) {
    throw new SchemaRefusal([], `a multiple of ${values.join(' and ')} needs ${n * (places + 1)} automaton states (more than ${MAX_MODULUS_STATES}); use a simpler multipleOf`);
  }
  const pow = (e: number) => Number(10n ** BigInt(e) % modulus);
  // States: 0 start, 1 after "-", then (f, r) at 2 + f · n + r: f fraction digits read (0 before
  // or at the point, where "." moves from (0, r) to the point state), remainder r.
  const id = (f: number, r: number) => 2 + f * n + r;
  const point = 2 + (places + 1) * n; // after ".", remainders (0..n−1) again with f = 0 → n states
  const pid = (r: number) => point + r;
  const total = point + n;
  const dfa: Dfa = { accept: Array.from({ length: total }, () => false), edges: Array.from({ length: total }, () => []) };
  const digit = (d: number) => [[0x30 + d, 0x30 + d]] as [number, number][];
  dfa.edges[0]!.push({ set: [[0x2d, 0x2d]], to: 1 });
  for (const from of [0, 1]) for (let d = 0; d <= 9; d++) dfa.edges[from]!.push({ set: digit(d), to: id(0, d % n) });
  for (let f = 0; f <= places; f++) {
    for (let r = 0; r < n; r++) {
      const at = id(f, r);
      dfa.accept[at] = (r * pow(places - f)) % n === 0;
      if (f === 0) {
        for (let d = 0; d <= 9; d++) dfa.edges[at]!.push({ set: digit(d), to: id(0, (r * 10 + d) % n) });
        if (places > 0) dfa.edges[at]!.push({ set: [[0x2e, 0x2e]], to: pid(r) });
      } else if (f < places) {
        for (let d = 0; d <= 9; d++) dfa.edges[at]!.push({ set: digit(d), to: id(f + 1, (r * 10 + d) % n) });
      }
    }
  }
  // After the point, at least one digit.
  for (let r = 0; r < n; r++) for (let d = 0; d <= 9; d++) dfa.edges[pid(r)]!.push({ set: digit(d), to: id(1, (r * 10 + d) % n) });
  const ranged = intersect('dfa' in range ? range.dfa : regexDfa(range.regex), dfa);
  return ranged.accept.length === 0 ? null : { dfa: ranged };
}

/** A decimal as digits: integer part (no leading zeros) and fraction (no trailing zeros). */
export interface Decimal {
  neg: boolean;
  int: string;
  frac: string;
}

/** The exact decimal of a double's shortest text (String(x)). */
export function decimalOf(x: number): Decimal {
  const neg = x < 0 || Object.is(x, -0);
  const [mant, exp] = String(Math.abs(x)).split('e') as [string, string | undefined];
  const [i, f = ''] = mant.split('.') as [string, string | undefined];
  let ds = i! + f;
  let point = i!.length + Number(exp ?? 0);
  if (point < 0) (ds = '0'.repeat(-point) + ds), (point = 0);
  if (point > ds.length) ds += '0'.repeat(point - ds.length);
  const int = ds.slice(0, point).replace(/^0+/, '') || '0';
  const frac = ds.slice(point).replace(/0+$/, '');
  return { neg: neg && (int !== '0' || frac !== ''), int, frac };
}

/** The next double toward +∞ (up) or −∞. */
export function nextDouble(x: number, up: boolean): number {
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  view.setBigUint64(0, (x > 0) === up ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

const FRAC_ANY = rep(seq(lit('.'), rep(D, 1, null)), 0, 1);
const DS = rep(D, 0, null);

/** Non-empty digit strings d with 0.d ≥ 0.f (f non-empty, no trailing zeros). */
function fracAtLeast(f: string): Regex {
  const rest = f.length === 1 ? DS : fracAtLeast(f.slice(1));
  return alt(...opt(digits(Number(f[0]) + 1, 9) && seq(digits(Number(f[0]) + 1, 9)!, DS), seq(lit(f[0]!), rest)));
}
/** Non-empty digit strings d with 0.d ≤ 0.f (f non-empty). */
function fracAtMostNE(f: string): Regex {
  const first = digits(0, Number(f[0]) - 1);
  return alt(...opt(first && seq(first, DS), seq(lit(f[0]!), fracAtMost(f.slice(1)))));
}
/** Digit strings d (empty allowed) with 0.d ≤ 0.f. */
function fracAtMost(f: string): Regex {
  return f === '' ? rep(lit('0'), 0, null) : alt(EMPTY, fracAtMostNE(f));
}
/** Non-empty digit strings d with 0.a ≤ 0.d ≤ 0.b (a non-empty). */
function fracBetween(a: string, b: string): Regex | null {
  const a0 = Number(a[0]);
  const b0 = b === '' ? 0 : Number(b[0]);
  if (a0 > b0) return null;
  if (a0 === b0) {
    if (a.length === 1) return seq(lit(a[0]!), fracAtMost(b.slice(1)));
    const inner = fracBetween(a.slice(1), b.slice(1));
    return inner && seq(lit(a[0]!), inner);
  }
  const mid = digits(a0 + 1, b0 - 1);
  return alt(...opt(seq(lit(a[0]!), a.length === 1 ? DS : fracAtLeast(a.slice(1))), mid && seq(mid, DS), seq(lit(b[0]!), fracAtMost(b.slice(1)))));
}

/** Texts of the non-negative decimals from `lo` to `hi` (hi null: no end; both non-negative). */
function decimals(lo: Decimal, hi: Decimal | null): Regex | null {
  const li = BigInt(lo.int);
  const atLeastLo = seq(lit(lo.int), lo.frac === '' ? FRAC_ANY : seq(lit('.'), fracAtLeast(lo.frac)));
  if (hi === null) return alt(atLeastLo, seq(naturals(li + 1n, null)!, FRAC_ANY));
  const ui = BigInt(hi.int);
  if (li > ui) return null;
  const upToHi = hi.frac === '' ? rep(seq(lit('.'), rep(lit('0'), 1, null)), 0, 1) : alt(EMPTY, seq(lit('.'), fracAtMostNE(hi.frac)));
  if (li === ui) {
    if (lo.frac === '') return seq(lit(lo.int), upToHi);
    const between = fracBetween(lo.frac, hi.frac);
    return between && seq(lit(lo.int), lit('.'), between);
  }
  const mid = naturals(li + 1n, ui - 1n);
  return alt(...opt(atLeastLo, mid && seq(mid, FRAC_ANY), seq(lit(hi.int), upToHi)));
}

const POSITIVE = regexDfa(alt(seq(digits(1, 9)!, DS, FRAC_ANY), seq(lit('0.'), rep(lit('0'), 0, null), digits(1, 9)!, DS)));
const isZero = (d: Decimal) => d.int === '0' && d.frac === '';

/** A bound on a number: its value and whether it is exclusive. */
export interface Bound {
  value: number;
  exclusive: boolean;
}

/** The texts of the numbers (decimals, no exponent) within the bounds; null when there is none. */
export function numberRange(lo: Bound | null, hi: Bound | null): Lang | null {
  // Inclusive bounds, but "strictly positive" / "strictly negative" at an exclusive 0.
  const strictLo = lo !== null && lo.exclusive && lo.value === 0;
  const strictHi = hi !== null && hi.exclusive && hi.value === 0;
  const l = lo === null ? null : inward(decimalOf(lo.exclusive && !strictLo ? nextDouble(lo.value, true) : lo.value), true);
  const h = hi === null ? null : inward(decimalOf(hi.exclusive && !strictHi ? nextDouble(hi.value, false) : hi.value), false);
  if (l !== null && h !== null && compareDecimals(l, h) > 0) return null;
  const zero: Decimal = { neg: false, int: '0', frac: '' };
  const abs = (d: Decimal): Decimal => ({ ...d, neg: false });
  const parts: Lang[] = [];
  if ((h === null || !h.neg) && !strictHi) {
    const from = l === null || l.neg ? zero : l;
    const r = decimals(from, h);
    if (r) parts.push(isZero(from) && strictLo ? { dfa: intersect(regexDfa(r), POSITIVE) } : { regex: r });
  }
  if (l === null || l.neg) {
    const from = h === null || !h.neg ? zero : abs(h);
    const r = decimals(from, l === null ? null : abs(l));
    if (r) parts.push(isZero(from) ? { dfa: prefixMinus(intersect(regexDfa(r), POSITIVE)) } : { regex: seq(lit('-'), r) });
  }
  const live = parts.filter((p) => !('dfa' in p) || p.dfa.accept.length > 0);
  if (live.length === 0) return null;
  if (live.every((p) => 'regex' in p)) return { regex: alt(...live.map((p) => (p as { regex: Regex }).regex)) };
  return { dfa: union(live.map((p) => ('dfa' in p ? p.dfa : regexDfa(p.regex)))) };
}

/** "-" then `d`. */
function prefixMinus(d: Dfa): Dfa {
  if (d.accept.length === 0) return d;
  return { accept: [false, ...d.accept], edges: [[{ set: [[0x2d, 0x2d]], to: 1 }], ...d.edges.map((es) => es.map((e) => ({ set: e.set, to: e.to + 1 })))] };
}

/** One automaton for several whose first characters never overlap in meaning ("-" or digits). */
function union(ds: Dfa[]): Dfa {
  if (ds.length === 1) return ds[0]!;
  // A fresh start state with each automaton's first edges (their first characters are disjoint:
  // "-" for negatives, digits for the rest).
  const out: Dfa = { accept: [ds.some((d) => d.accept[0])], edges: [[]] };
  for (const d of ds) {
    const base = out.accept.length;
    out.accept.push(...d.accept);
    out.edges.push(...d.edges.map((es) => es.map((e) => ({ set: e.set, to: e.to + base }))));
    out.edges[0]!.push(...d.edges[0]!.map((e) => ({ set: e.set, to: e.to + base })));
  }
  return out;
}

/** `d` rounded to MAX_FRACTION_DIGITS toward the inside of the range (up for a lower bound) and clamped to MAX_INT_DIGITS. */
function inward(d: Decimal, lower: boolean): Decimal {
  if (d.int.length > MAX_INT_DIGITS) {
    if (d.neg !== lower) tooLarge(); // a lower bound past +MAX, an upper bound past −MAX
    return { neg: d.neg, int: MAX_INT.toString(), frac: '' };
  }
  if (d.frac.length <= MAX_FRACTION_DIGITS) return d;
  const scaled = BigInt(d.int + d.frac.slice(0, MAX_FRACTION_DIGITS));
  // Truncation moves toward zero: inward for a negative lower bound or a positive upper bound.
  const magnitude = d.neg === lower ? scaled : scaled + 1n;
  const text = magnitude.toString().padStart(MAX_FRACTION_DIGITS + 1, '0');
  const int = text.slice(0, -MAX_FRACTION_DIGITS).replace(/^0+/, '') || '0';
  const frac = text.slice(-MAX_FRACTION_DIGITS).replace(/0+$/, '');
  return { neg: d.neg && (int !== '0' || frac !== ''), int, frac };
}

export function compareDecimals(a: Decimal, b: Decimal): number {
  if (a.neg !== b.neg) return a.neg ? -1 : 1;
  const sign = a.neg ? -1 : 1;
  if (a.int.length !== b.int.length) return sign * (a.int.length - b.int.length);
  if (a.int !== b.int) return sign * (a.int < b.int ? -1 : 1);
  const n = Math.max(a.frac.length, b.frac.length);
  const fa = a.frac.padEnd(n, '0');
  const fb = b.frac.padEnd(n, '0');
  return fa === fb ? 0 : sign * (fa < fb ? -1 : 1);
}
