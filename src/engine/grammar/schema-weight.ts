/**
 * Where a schema's grammar grows: an estimate, from the schema alone, of how much grammar each
 * part of it makes (the characters a string may hold, a pattern's repetitions, an enum's text,
 * an array's items times its bound, the branches of a union), and the path to the part that holds
 * most of it. A compile stopped at its bound (worker-grammar-backend.ts) names that part in its
 * 422, so that the client knows what to simplify. It is an estimate: the compile's real cost
 * depends on the grammar engine and the vocabulary; the part it names is the one that would
 * make the largest grammar, not a measurement.
 */
import type { JsonSchema } from '../../contract/index.ts';

type Node = JsonSchema | boolean | undefined;

/** The schema's weight and its heaviest part: a path below the schema (`.properties.a.items`, or "" for the whole). */
export function heaviestPart(schema: JsonSchema): { path: string; weight: number } {
  let node: Node = schema;
  let path = '';
  const weight = weightOf(schema);
  for (;;) {
    const here = weightOf(node);
    let best: { key: string; child: Node; weight: number } | null = null;
    for (const [key, child] of children(node)) {
      const w: number = weightOf(child) * times(node, key);
      if (!best || w > best.weight) best = { key, child, weight: w };
    }
    // Down while one child holds most of the weight here.
    if (!best || best.weight * 2 < here) return { path, weight };
    path += best.key;
    node = best.child;
  }
}

/** The subschemas of `node`, each with the path segment that reaches it. */
function children(node: Node): [string, Node][] {
  if (!node || typeof node !== 'object') return [];
  const out: [string, Node][] = [];
  const s = node as Record<string, unknown>;
  for (const map of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) {
    const m = s[map];
    if (m && typeof m === 'object') for (const [k, v] of Object.entries(m)) out.push([`.${map}${segment(k)}`, v as Node]);
  }
  for (const list of ['anyOf', 'oneOf', 'allOf', 'prefixItems']) {
    const l = s[list];
    if (Array.isArray(l)) l.forEach((v, i) => out.push([`.${list}[${i}]`, v as Node]));
  }
  for (const one of ['items', 'additionalProperties', 'propertyNames', 'contains', 'not', 'if', 'then', 'else', 'additionalItems']) {
    const v = s[one];
    if (v && typeof v === 'object') {
      if (Array.isArray(v)) v.forEach((w, i) => out.push([`.${one}[${i}]`, w as Node]));
      else out.push([`.${one}`, v as Node]);
    }
  }
  return out;
}

function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

const weights = new WeakMap<object, number>();

/** The grammar `node` makes, roughly, in characters of grammar. */
function weightOf(node: Node): number {
  if (!node || typeof node !== 'object') return 1;
  const held = weights.get(node);
  if (held !== undefined) return held;
  weights.set(node, 1); // a cycle (a shared object) counts once
  const s = node as Record<string, unknown>;
  let w = 1;
  const num = (k: string) => (typeof s[k] === 'number' && Number.isFinite(s[k]) ? (s[k] as number) : null);
  const maxLength = num('maxLength');
  const minLength = num('minLength');
  if (maxLength !== null || minLength !== null) w += Math.max(maxLength ?? 0, minLength ?? 0);
  if (typeof s['pattern'] === 'string') w += patternWeight(s['pattern']);
  if (Array.isArray(s['enum'])) w += s['enum'].reduce((sum: number, v) => sum + JSON.stringify(v).length, 0);
  if ('const' in s) w += JSON.stringify(s['const'])?.length ?? 1;
  for (const k of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']) if (num(k) !== null) w += String(num(k)).length * 4;
  for (const [key, child] of children(node)) w += weightOf(child) * times(node, key);
  weights.set(node, w);
  return w;
}

/** How many times the grammar of `node`'s child at `key` is repeated: an array's items by its bound, an object's extra properties by its. */
function times(node: Node, key: string): number {
  const s = node as Record<string, unknown>;
  const num = (k: string) => (typeof s[k] === 'number' && Number.isFinite(s[k]) ? (s[k] as number) : 0);
  if (key === '.items' || key === '.contains' || key === '.additionalItems') return Math.max(num('maxItems'), num('minItems'), 1);
  if (key === '.additionalProperties' || key.startsWith('.patternProperties') || key === '.propertyNames') return Math.max(num('maxProperties'), num('minProperties'), 1);
  return 1;
}

/** A pattern's size with its bounded repetitions unrolled: `(a|b){1,200}` weighs 200 times `(a|b)`. */
function patternWeight(pattern: string): number {
  // Innermost first: a group followed by {m,n} becomes its weight times n.
  const stack: number[] = [0];
  let last = 1;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      stack[stack.length - 1]! += 1;
      last = 1;
    } else if (c === '(') stack.push(0);
    else if (c === ')' && stack.length > 1) {
      last = stack.pop()! + 1;
      stack[stack.length - 1]! += last;
    } else if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (m) {
        const times = Number(m[2] || m[1]);
        stack[stack.length - 1]! += last * Math.max(times - 1, 0);
        i += m[0].length - 1;
      } else stack[stack.length - 1]! += 1;
    } else {
      stack[stack.length - 1]! += 1;
      last = 1;
    }
  }
  return stack.reduce((a, b) => a + b, 0);
}
