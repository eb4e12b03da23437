/**
 * Tensor dimensions as polynomials over the graph's symbolic input dimensions (`batch_size`,
 * `sequence_length`, …) with integer coefficients: what symbolic-shapes.ts computes a value's shape
 * with. Two dimensions are the same when their canonical text is; that text is what the graph's
 * `value_info` names a symbolic dimension by (`past_sequence_length + sequence_length`), so equal
 * sizes get equal names.
 */

/** A dimension: monomial (its symbols, sorted, joined by `*`; '' for the constant) → coefficient. */
export type Dim = ReadonlyMap<string, number>;

export const constant = (n: number): Dim => new Map(n === 0 ? [] : [['', n]]);
export const symbol = (name: string): Dim => new Map([[name, 1]]);

/** The number a dimension is, or null where it is symbolic. */
export function valueOf(d: Dim): number | null {
  if (d.size === 0) return 0;
  return d.size === 1 && d.has('') ? d.get('')! : null;
}

/** The canonical text of a dimension: its terms by monomial, constant last. */
export function textOf(d: Dim): string {
  const terms = [...d].sort(([a], [b]) => (a === '' ? 1 : b === '' ? -1 : a < b ? -1 : a > b ? 1 : 0));
  if (terms.length === 0) return '0';
  return terms.map(([m, c], i) => {
    const sign = c < 0 ? (i === 0 ? '-' : ' - ') : i === 0 ? '' : ' + ';
    const magnitude = Math.abs(c);
    return sign + (m === '' ? `${magnitude}` : magnitude === 1 ? m : `${magnitude}*${m}`);
  }).join('');
}

export const same = (a: Dim, b: Dim): boolean => textOf(a) === textOf(b);

function combine(a: Dim, b: Dim, sign: number): Dim {
  const out = new Map(a);
  for (const [m, c] of b) {
    const v = (out.get(m) ?? 0) + sign * c;
    if (v === 0) out.delete(m);
    else out.set(m, v);
  }
  return out;
}

export const add = (a: Dim, b: Dim): Dim => combine(a, b, 1);
export const sub = (a: Dim, b: Dim): Dim => combine(a, b, -1);

export function mul(a: Dim, b: Dim): Dim {
  let out: Dim = new Map();
  for (const [ma, ca] of a) {
    for (const [mb, cb] of b) {
      const m = [...ma.split('*'), ...mb.split('*')].filter((s) => s !== '').sort().join('*');
      out = add(out, new Map([[m, ca * cb]]));
    }
  }
  return out;
}

/** `a / b` where it divides exactly: by a number (each coefficient), or by itself; else null. */
export function div(a: Dim, b: Dim): Dim | null {
  if (same(a, b) && a.size > 0) return constant(1);
  const n = valueOf(b);
  if (n === null || n === 0) return null;
  const out = new Map<string, number>();
  for (const [m, c] of a) {
    if (c % n !== 0) return null;
    out.set(m, c / n);
  }
  return out;
}

/** The product of `numerator` over that of `denominator`, cancelling equal factors first; null where it does not divide. */
export function quotient(numerator: readonly Dim[], denominator: readonly Dim[]): Dim | null {
  const top = [...numerator];
  let rest = constant(1);
  for (const d of denominator) {
    const at = top.findIndex((t) => same(t, d));
    if (at >= 0) top.splice(at, 1);
    else rest = mul(rest, d);
  }
  return div(top.reduce(mul, constant(1)), rest);
}
