/**
 * A value's canonical form for keys and fingerprints: every object becomes its entries sorted by
 * key (recursively), so that two values that differ only in property order are the same.
 */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.keys(value)
      .sort()
      .map((k) => [k, canonical((value as Record<string, unknown>)[k])]);
  }
  return value;
}
