/**
 * Bit-reproducible elementary functions for the generator's constant tables (RoPE cos/sin).
 *
 * ECMAScript leaves the last bits of Math.exp/log/pow/sin/cos implementation-defined, while
 * +, -, *, / and Math.round are exact IEEE-754 double operations everywhere. These series
 * implementations use only the latter, so the tables (and thus model.onnx) are byte-identical
 * on any engine. Accuracy is ~1e-15 relative, far below the float32 the tables are stored in.
 */

const LN2 = 0.6931471805599453;
const TWO_PI = 6.283185307179586;

/** Natural logarithm for x > 0. */
export function detLn(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeError(`detLn: bad argument ${x}`);
  let e = 0;
  let m = x;
  while (m > 1.4142135623730951) {
    m /= 2;
    e++;
  }
  while (m < 0.7071067811865476) {
    m *= 2;
    e--;
  }
  // ln(m) = 2 atanh(z), z = (m - 1) / (m + 1), |z| <= 0.172
  const z = (m - 1) / (m + 1);
  const z2 = z * z;
  let term = z;
  let sum = 0;
  for (let k = 1; k < 60; k += 2) {
    sum += term / k;
    term *= z2;
  }
  return e * LN2 + 2 * sum;
}

/** e^y. */
export function detExp(y: number): number {
  const k = Math.round(y / LN2);
  const r = y - k * LN2;
  let term = 1;
  let sum = 1;
  for (let n = 1; n < 30; n++) {
    term *= r / n;
    sum += term;
  }
  let p = sum;
  if (k > 0) for (let i = 0; i < k; i++) p *= 2;
  else for (let i = 0; i < -k; i++) p /= 2;
  return p;
}

/** base^exponent for base > 0. */
export function detPow(base: number, exponent: number): number {
  return detExp(exponent * detLn(base));
}

function reduceAngle(x: number): number {
  const k = Math.round(x / TWO_PI);
  return x - k * TWO_PI; // in [-pi, pi] (to within rounding)
}

/** cos(x), Taylor series after reduction to [-pi, pi]. */
export function detCos(x: number): number {
  const r = reduceAngle(x);
  const r2 = r * r;
  let term = 1;
  let sum = 1;
  for (let n = 2; n < 44; n += 2) {
    term *= -r2 / ((n - 1) * n);
    sum += term;
  }
  return sum;
}

/** sin(x), Taylor series after reduction to [-pi, pi]. */
export function detSin(x: number): number {
  const r = reduceAngle(x);
  const r2 = r * r;
  let term = r;
  let sum = r;
  for (let n = 3; n < 45; n += 2) {
    term *= -r2 / ((n - 1) * n);
    sum += term;
  }
  return sum;
}
