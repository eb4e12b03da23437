/**
 * One schema through the engine's two acceptance checks, as a request meets them: the contract's
 * (`checkSchemaSubset`, the 400 at the boundary), then the grammar compiler's (`schemaToGrammar`,
 * schema → EBNF and the length bounds its matcher keeps, as a response format or a tool call is
 * compiled; it refuses what it cannot enforce exactly). A refusal is named by the keyword
 * its path ends at (the last JSON-Schema keyword of the path, not a property name or an index), as
 * the 400's `param` names it, with the message a client would read.
 */
import { validationMessage } from '../../src/contract/messages.ts';
import { checkSchemaSubset, type JsonSchema } from '../../src/contract/json-schema-subset.ts';
import type { PathSegment } from '../../src/contract/param-path.ts';
import { schemaToGrammar } from '../../src/engine/grammar/json-schema/compile.ts';
import { SchemaRefusal } from '../../src/engine/grammar/json-schema/refusal.ts';

export type Verdict =
  | { stage: 'accepted'; ms: number; ebnfBytes: number }
  | { stage: 'contract' | 'compiler'; keyword: string; reason: string; ms: number }
  /** The compiler threw something other than a refusal: a bug (a 500 at request time). */
  | { stage: 'crash'; keyword: string; reason: string; ms: number };

/** Keywords whose value maps names to schemas: the segment after them is a name, then a schema. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies', 'dependentRequired']);
/** Keywords whose value is a list of schemas: the segment after them is an index, then a schema. */
const LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items']);

/** The JSON-Schema keyword a path ends at: `['properties','a','format']` → `format`; `['properties','a']` → `properties`. */
export function keywordAt(path: readonly PathSegment[]): string {
  let keyword = 'schema';
  let i = 0;
  while (i < path.length) {
    const seg = path[i]!;
    if (typeof seg !== 'string') {
      i++; // an index where a schema was expected (a list's item, a dependency's name list)
      continue;
    }
    keyword = seg;
    if (NAME_MAPS.has(seg)) i += 2; // the name, then a schema again
    else if (LISTS.has(seg) && typeof path[i + 1] === 'number') i += 2;
    else i += 1;
  }
  return keyword;
}

/** Where and why `schema` is refused, or that it is accepted (with its EBNF's size). */
export function schemaVerdict(schema: unknown): Verdict {
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  const problem = checkSchemaSubset(schema);
  if (problem) {
    const param = ['schema', ...problem.path].map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.');
    return { stage: 'contract', keyword: keywordAt(problem.path), reason: validationMessage(problem.kind, param, problem.args as never), ms: ms() };
  }
  try {
    const { ebnf } = schemaToGrammar(schema as JsonSchema);
    return { stage: 'accepted', ms: ms(), ebnfBytes: ebnf.length };
  } catch (e) {
    if (e instanceof SchemaRefusal) return { stage: 'compiler', keyword: keywordAt(e.path), reason: e.reason, ms: ms() };
    const err = e as Error;
    return { stage: 'crash', keyword: keywordAt([]), reason: `${err?.name ?? 'Error'}: ${err?.message ?? String(e)}`, ms: ms() };
  }
}

/** A refusal's message with its specifics (quoted values, numbers, the param) replaced, so that like refusals count together. */
export function reasonShape(reason: string): string {
  return reason
    .replace(/^'[^']*'(:| cannot be enforced:| is refused:)?\s*/, '')
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/-?\d+(\.\d+)?/g, 'N')
    .slice(0, 140);
}
