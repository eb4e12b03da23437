/**
 * JSON values as the engine writes them (one line, `", "` and `": "` separators, properties in the
 * order given), JSON equality (as JSON Schema compares: 1 equals 1.0, object key order ignored),
 * and the types JSON Schema names.
 */
export const SCHEMA_TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` written as the engine writes JSON. */
export function writeJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(writeJson).join(', ')}]`;
  if (isObject(value)) return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${writeJson(v)}`).join(', ')}}`;
  return JSON.stringify(value);
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** Whether `value` is of JSON-Schema type `t`. */
export function hasType(value: unknown, t: SchemaType): boolean {
  switch (t) {
    case 'null': return value === null;
    case 'boolean': return typeof value === 'boolean';
    case 'string': return typeof value === 'string';
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'integer': return typeof value === 'number' && Number.isInteger(value);
    case 'array': return Array.isArray(value);
    case 'object': return isObject(value);
  }
}

/** The string's length as JSON Schema counts it: code points. */
export const codePoints = (s: string): number => [...s].length;

/** Greatest common divisor and least common multiple of positive bigints. */
export function gcd(a: bigint, b: bigint): bigint {
  while (b) [a, b] = [b, a % b];
  return a;
}
export const lcm = (a: bigint, b: bigint): bigint => (a / gcd(a, b)) * b;
