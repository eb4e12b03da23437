/**
 * A response schema of the enforced subset (contract/json-schema-subset.ts), rewritten into one
 * xgrammar 0.1.27 enforces exactly, accepting a subset of the same values:
 *
 * - an integer range (`minimum`…`maximum`, at most limits.maxIntegerRange values) becomes an
 *   `enum` of its integers: xgrammar's own ranges are wrong ([0, 120] lets 121–129 through);
 * - a `pattern` becomes its enforceable form (contract/json-schema-pattern.ts: anchored, classes
 *   narrowed to what a raw JSON string holds);
 * - a `format` becomes a pattern of our own (format-patterns.ts), where we have one.
 *
 * Annotations are dropped (they do not change the grammar, and the cache key is the rewritten schema).
 */
import { enforceablePattern, integerRange, isPlainObject, schemaAnnotations, type JsonSchema } from '../../contract/index.ts';
import { FORMAT_PATTERNS } from './format-patterns.ts';

const ANNOTATIONS: ReadonlySet<string> = new Set(schemaAnnotations);
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions']);
const SCHEMA_LISTS = new Set(['anyOf', 'prefixItems']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties']);
const BOUNDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']);

export function xgrammarSchema(schema: JsonSchema): JsonSchema {
  return rewrite(schema);
}

function rewrite(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (ANNOTATIONS.has(key) || BOUNDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isPlainObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v as JsonSchema)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      out[key] = value.map((v) => rewrite(v as JsonSchema));
    } else if (SCHEMA_VALUES.has(key) && isPlainObject(value)) {
      out[key] = rewrite(value);
    } else if (key === 'pattern' && typeof value === 'string') {
      const check = enforceablePattern(value);
      if (!check.ok) throw new Error(`pattern ${JSON.stringify(value)} is not enforceable: ${check.reason}`);
      out[key] = check.pattern;
    } else if (key === 'format' && typeof value === 'string' && FORMAT_PATTERNS[value as keyof typeof FORMAT_PATTERNS]) {
      const pattern = FORMAT_PATTERNS[value as keyof typeof FORMAT_PATTERNS]!;
      const check = enforceablePattern(pattern);
      if (!check.ok) throw new Error(`the pattern of format ${value} is not enforceable: ${check.reason}`);
      out['pattern'] = check.pattern;
    } else {
      out[key] = value;
    }
  }
  const range = Object.keys(node).some((k) => BOUNDS.has(k)) ? integerRange(node) : null;
  if (range === null) return out;
  const values = Array.from({ length: range.hi - range.lo + 1 }, (_, i) => range.lo + i);
  const types = typeof out['type'] === 'string' ? [out['type']] : (out['type'] as string[]);
  const others = types.filter((t) => t !== 'integer');
  if (others.length === 0) {
    delete out['type'];
    out['enum'] = values;
    return out;
  }
  // ["integer", "null", …]: the range, or a value of the other types with the schema's other
  // keywords; definitions stay at the root, where references find them.
  const { $defs, definitions, ...rest } = out;
  return {
    ...($defs === undefined ? {} : { $defs }),
    ...(definitions === undefined ? {} : { definitions }),
    anyOf: [{ enum: values }, { ...rest, type: others.length === 1 ? others[0] : others }],
  };
}
