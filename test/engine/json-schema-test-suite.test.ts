/**
 * The grammar as a validator, with no model: every test group of the JSON-Schema-Test-Suite
 * (draft 2020-12 and draft-07, test/fixtures/json-schema-test-suite/) is either refused with a 400
 * naming a keyword (the contract's check, then the compiler's), or accepted; for an accepted group,
 * its compiled grammar (a real xgrammar matcher over a character vocabulary) must take each valid
 * instance written as the engine writes JSON (compact, properties in the schema's order), unless
 * the engine's writing policy leaves it out (a reason from `policyReason`, listed in
 * docs/structured-output.md), and must refuse each invalid instance. An accepted group that lets
 * an invalid instance through is a defect: the test fails on it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSchemaSubset, formatParam, JevError } from '../../src/contract/index.ts';
import { CharWalker } from '../support/grammar-walk.ts';

const ROOT = join(import.meta.dirname, '../fixtures/json-schema-test-suite');
const DRAFTS = [
  { dir: 'draft2020-12', uri: 'https://json-schema.org/draft/2020-12/schema' },
  { dir: 'draft7', uri: 'http://json-schema.org/draft-07/schema#' },
];
interface Case { description: string; data: unknown; valid: boolean }
interface Group { description: string; schema: unknown; tests: Case[] }

const files = DRAFTS.flatMap((d) => readdirSync(join(ROOT, d.dir)).filter((f) => f.endsWith('.json')).sort().map((f) => ({ draft: d, keyword: f.replace(/\.json$/, ''), groups: JSON.parse(readFileSync(join(ROOT, d.dir, f), 'utf8')) as Group[] })));

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `value` as the engine writes it, properties in the order of the schema's `properties` where it names them. */
function write(value: unknown, schema: unknown): string {
  const s = isObj(schema) ? schema : {};
  if (Array.isArray(value)) {
    const prefix = Array.isArray(s['prefixItems']) ? s['prefixItems'] : Array.isArray(s['items']) ? s['items'] : [];
    return `[${value.map((v, i) => write(v, prefix[i] ?? (Array.isArray(s['items']) ? s['additionalItems'] : s['items']))).join(', ')}]`;
  }
  if (isObj(value)) {
    const props = isObj(s['properties']) ? s['properties'] : {};
    const keys = [...Object.keys(props).filter((k) => Object.hasOwn(value, k)), ...Object.keys(value).filter((k) => !Object.hasOwn(props, k))];
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${write(value[k], props[k] ?? s['additionalProperties'])}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

/** Why the engine's writing policy leaves a valid instance out; null where it should be written. */
function policyReason(schema: unknown, data: unknown, text: string): string | null {
  if (/\\ud[89a-f][0-9a-f]{2}/i.test(text)) return 'a lone UTF-16 surrogate: not a character a well-formed reply can hold';
  if (/[^\x00-\x7f]/.test(text)) return 'a non-ASCII character of a range or complement the grammar engine cannot match (only all of them, or listed ones)';
  if (/[0-9]e[+-]?[0-9]/i.test(text) || /\.[0-9]*0[,\]} ]|\.0$/.test(text)) return 'a number with an exponent under a bound (the engine writes bounded numbers as plain decimals)';
  const extra = (s: unknown, v: unknown): boolean => {
    if (!isObj(s)) return false;
    if (isObj(v) && (isObj(s['properties']) || isObj(s['patternProperties'])) && !('additionalProperties' in s) && Object.keys(v).some((k) => !Object.hasOwn(s['properties'] ?? {}, k))) return true;
    if (Array.isArray(v) && Array.isArray(s['prefixItems'] ?? s['items']) && !('items' in s && !Array.isArray(s['items'])) && !('additionalItems' in s) && v.length > ((s['prefixItems'] ?? s['items']) as unknown[]).length) return true;
    for (const k of ['allOf', 'anyOf', 'oneOf']) if (Array.isArray(s[k]) && s[k].some((b) => extra(b, v))) return true;
    if (isObj(v) && isObj(s['properties'])) for (const [k, sub] of Object.entries(s['properties'])) if (Object.hasOwn(v, k) && extra(sub, v[k])) return true;
    if (Array.isArray(v) && isObj(s['items'])) return v.some((x) => extra(s['items'], x));
    return false;
  };
  if (extra(schema, data)) return "a property beyond 'properties' (or an item beyond 'prefixItems') the schema does not restrict: the engine writes none where additionalProperties (items) is not given";
  if (isObj(schema) && typeof schema['format'] === 'string' && typeof data === 'string') return "a string the format does not allow: the engine enforces known formats as assertions (as ajv-formats validates them), where 2020-12 makes them annotations by default";
  if (isObj(schema) && schema['uniqueItems'] === true) return "unique items in another order than the items' domain: the engine writes them in the domain's order";
  if (Array.isArray(data) || isObj(data)) return 'an order of properties or items the engine does not write';
  return null;
}

const chars = new Set<string>();
for (const f of files) for (const g of f.groups) for (const t of g.tests) for (const ch of JSON.stringify(t.data)) if (ch.charCodeAt(0) >= 0x80) chars.add(ch);
const walker = new CharWalker(chars);
afterAll(() => walker.clear());

interface Tally { accepted: number; refused: number; byKeyword: Map<string, number> }
const tallies = new Map<string, Tally>();
const cannotWrite: string[] = [];
const defects: string[] = [];

describe.each(files)('$draft.dir/$keyword', ({ draft, keyword, groups }) => {
  const tally: Tally = { accepted: 0, refused: 0, byKeyword: new Map() };
  tallies.set(`${draft.dir}/${keyword}`, tally);
  it.each(groups.map((g, i) => ({ g, i })))('group $i', async ({ g }) => {
    const schema = isObj(g.schema) && !('$schema' in g.schema) ? { $schema: draft.uri, ...g.schema } : g.schema;
    const format = { type: 'json_schema' as const, schema: schema as Record<string, unknown> };
    const refuse = (param: string) => {
      tally.refused++;
      const kw = param.split(/[.[\]"]+/).filter((p) => p && !/^\d+$/.test(p)).pop() ?? 'schema';
      tally.byKeyword.set(kw, (tally.byKeyword.get(kw) ?? 0) + 1);
    };
    const problem = checkSchemaSubset(schema);
    if (problem) return refuse(formatParam(['schema', ...problem.path])!);
    try {
      await walker.grammar(format);
    } catch (e) {
      if (!(e instanceof JevError)) throw e;
      expect(e.status, e.message).toBe(400);
      return refuse(e.param ?? 'schema');
    }
    tally.accepted++;
    for (const t of g.tests) {
      const text = write(t.data, schema);
      const ok = await walker.accepts(format, text);
      if (t.valid && !ok) {
        const why = policyReason(schema, t.data, text);
        cannotWrite.push(`${draft.dir}/${keyword}: "${g.description}" / "${t.description}": ${text.slice(0, 80)} — ${why ?? 'UNEXPLAINED'}`);
        expect(why, `valid instance refused without a policy reason: ${g.description} / ${t.description}: ${text}`).not.toBeNull();
      }
      if (!t.valid && ok) defects.push(`${draft.dir}/${keyword}: "${g.description}" / "${t.description}": ${text}`);
      expect(t.valid || !ok, `an accepted group let an invalid instance through: ${g.description} / ${t.description}: ${text}`).toBe(true);
    }
  });
});

afterAll(() => {
  const rows = [...tallies].map(([k, t]) => `| ${k} | ${t.accepted} | ${t.refused} | ${[...t.byKeyword].map(([kw, n]) => `${kw} ${n}`).join(', ')} |`);
  console.log(['| file | accepted groups | refused groups | refused at |', '| --- | --- | --- | --- |', ...rows].join('\n'));
  console.log(`valid instances the engine does not write (${cannotWrite.length}):\n${cannotWrite.join('\n')}`);
  if (defects.length) console.log(`DEFECTS:\n${defects.join('\n')}`);
});
