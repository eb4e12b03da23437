/**
 * The `structured` compile rows (issue 57 item 5; docs/structured-output.md, "Compile time"): in
 * Node, on the SmolLM2-shaped generated model's engine (its 49,152-token vocabulary), the time to
 * compile each accepted schema into a grammar (the engine's grammar cache's own `compileMs`, one
 * cold compile per schema), as p50, p95 and max over two sets: the JSON-Schema-Test-Suite's
 * accepted group schemas (draft 2020-12 and draft-07, test/fixtures) and schemas as libraries write
 * them (zod 4 `z.toJSONSchema`, Pydantic v2 style, OpenAPI 3.1 components). Then, for the slowest
 * schema to compile, and for everyday ones (a free-text string, a bounded string, an unanchored
 * pattern, zod's user), greedy chat under it against the same chat without it: ms per token after
 * the first, and their ratio (the mask's cost per token). Node, not Chromium: the browser rows are
 * bench/lib/structured-rows.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { JsonSchema } from '../../src/contract/index.ts';
import { checkSchemaSubset } from '../../src/contract/json-schema-subset.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { schemaToEbnf } from '../../src/engine/grammar/json-schema/compile.ts';
import { GENERATED, loadEngine } from '../../test/support/models.ts';
import { SMOL } from './plan.ts';
import { median } from './schema.ts';

import type { CompileRow, MaskRow, StructuredCompileResult } from './schema-feature-rows.ts';
export type { CompileRow, MaskRow, StructuredCompileResult };

const SUITE = join(import.meta.dirname, '../../test/fixtures/json-schema-test-suite');

/** The test suite's group schemas that the contract and the compiler accept. */
export function suiteSchemas(): { name: string; schema: JsonSchema }[] {
  const out: { name: string; schema: JsonSchema }[] = [];
  for (const draft of ['draft2020-12', 'draft7']) {
    for (const file of readdirSync(join(SUITE, draft)).filter((f) => f.endsWith('.json')).sort()) {
      const groups = JSON.parse(readFileSync(join(SUITE, draft, file), 'utf8')) as { description: string; schema: unknown }[];
      for (const g of groups) {
        if (typeof g.schema !== 'object' || g.schema === null || Array.isArray(g.schema)) continue;
        const schema = (draft === 'draft7' && !('$schema' in g.schema) ? { $schema: 'http://json-schema.org/draft-07/schema#', ...g.schema } : g.schema) as JsonSchema;
        if (checkSchemaSubset(schema) !== null) continue;
        try {
          schemaToEbnf(schema);
        } catch {
          continue;
        }
        out.push({ name: `${draft}/${file.replace('.json', '')}: ${g.description}`, schema });
      }
    }
  }
  return out;
}

/** Everyday app schemas as zod 4, Pydantic v2 and OpenAPI 3.1 write them. */
export function librarySchemas(): { name: string; schema: JsonSchema }[] {
  const user = z.object({
    id: z.uuid(),
    email: z.email(),
    site: z.url().optional(),
    age: z.number().int().min(1),
    score: z.number().positive(),
    nickname: z.string().max(12).nullable(),
    tags: z.array(z.string().max(8)).max(3),
    prefs: z.record(z.string().max(6), z.boolean()),
    point: z.tuple([z.number().int(), z.number().int()]),
  });
  const event = z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('click'), x: z.number().int().nonnegative(), y: z.number().int().nonnegative() }),
    z.object({ kind: z.literal('key'), key: z.string().max(4), at: z.iso.date() }),
  ]);
  const zod = (name: string, t: z.ZodType) => ({ name: `zod 4: ${name}`, schema: z.toJSONSchema(t) as JsonSchema });
  const pydantic: JsonSchema = {
    $defs: {
      Address: { title: 'Address', type: 'object', properties: { street: { title: 'Street', type: 'string', maxLength: 20 }, zip: { title: 'Zip', anyOf: [{ type: 'string', pattern: '^[0-9]{5}$' }, { type: 'null' }], default: null } }, required: ['street'] },
      Role: { title: 'Role', type: 'string', enum: ['admin', 'user'] },
    },
    title: 'Person',
    type: 'object',
    properties: {
      name: { title: 'Name', type: 'string', maxLength: 16 },
      age: { title: 'Age', anyOf: [{ type: 'integer', minimum: 0 }, { type: 'null' }], default: null },
      role: { $ref: '#/$defs/Role' },
      address: { $ref: '#/$defs/Address' },
      friends: { title: 'Friends', type: 'array', items: { $ref: '#/$defs/Address' }, maxItems: 2 },
    },
    required: ['name', 'role', 'address'],
  };
  const openapi: JsonSchema = {
    components: {
      schemas: {
        Pet: { type: 'object', required: ['id', 'name'], properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string', maxLength: 12 }, tag: { type: ['string', 'null'], maxLength: 8 }, status: { type: 'string', enum: ['available', 'pending', 'sold'], description: 'pet status in the store' } } },
        Error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer', format: 'int32' }, message: { type: 'string', maxLength: 20 } } },
      },
    },
    type: 'object',
    properties: { pets: { type: 'array', items: { $ref: '#/components/schemas/Pet' }, maxItems: 3 }, error: { $ref: '#/components/schemas/Error' } },
    required: ['pets'],
  };
  // A length bound beside a format: zod's `.email().max()`, Pydantic's HttpUrl and EmailStr, OpenAPI's usual 254 (kept by the matcher: json-schema/length-guard.ts).
  const signup = z.object({ email: z.email().max(100), name: z.string().max(40) });
  const contact: JsonSchema = {
    title: 'Contact',
    type: 'object',
    properties: { site: { title: 'Site', type: 'string', format: 'uri', minLength: 1, maxLength: 2083 }, mail: { title: 'Mail', type: 'string', format: 'email' }, backup: { title: 'Backup', anyOf: [{ type: 'string', format: 'email', maxLength: 254 }, { type: 'null' }], default: null } },
    required: ['site', 'mail'],
  };
  return [zod('user', user), zod('event (discriminatedUnion)', event), zod('signup (.email().max(100))', signup), { name: 'Pydantic v2: Person', schema: pydantic }, { name: 'Pydantic v2: Contact (HttpUrl, EmailStr)', schema: contact }, { name: 'OpenAPI 3.1: pets', schema: openapi }];
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
const r1 = (x: number) => Math.round(x * 10) / 10;

/** Compile rows per set, and the mask's cost on the slowest schema; `limit` caps the suite's schemas (a small run). */
export async function measureStructuredCompile(log: (...a: unknown[]) => void, limit?: number): Promise<StructuredCompileResult> {
  const engine = await loadEngine(GENERATED, SMOL, 'fp32', { prefixCacheBytes: 0 });
  const timed: { name: string; schema: JsonSchema; ms: number }[] = [];
  const compileRows: CompileRow[] = [];
  try {
    const sets = [
      ['JSON-Schema-Test-Suite (accepted groups)', suiteSchemas().slice(0, limit)],
      ['library-written (zod 4, Pydantic v2, OpenAPI 3.1)', librarySchemas()],
    ] as const;
    let n = 0;
    // Warm: xgrammar's wasm start and the vocabulary's tables are paid here, not by the first timed schema.
    await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'x' }], max_tokens: 1, response_format: { type: 'json_schema', json_schema: { name: 'warm', schema: { type: 'object', properties: { warm: { type: 'boolean' } } } } } }, { id: 'compile-warm' });
    for (const [set, schemas] of sets) {
      const times: { name: string; ms: number }[] = [];
      for (const { name, schema } of schemas) {
        const before = engine.grammars.counters().compileMs;
        const body = { model: 'jev', messages: [{ role: 'user' as const, content: 'x' }], max_tokens: 1, temperature: 0, response_format: { type: 'json_schema' as const, json_schema: { name: 'b', schema } } };
        try {
          await engine.chat(body, { id: `compile-${++n}` });
        } catch (e) {
          log(`  ${name}: ${(e as Error).message.split('\n')[0]}`);
          continue;
        }
        const ms = engine.grammars.counters().compileMs - before;
        times.push({ name, ms });
        timed.push({ name, schema, ms });
      }
      const sorted = times.map((t) => t.ms).sort((a, b) => a - b);
      const slowest = times.reduce((a, b) => (b.ms > a.ms ? b : a), times[0]!);
      compileRows.push({ set, schemas: times.length, p50_ms: r1(quantile(sorted, 0.5)), p95_ms: r1(quantile(sorted, 0.95)), max_ms: r1(sorted.at(-1)!), slowest: slowest.name });
      log(`  ${set}: ${times.length} schemas, p50 ${r1(quantile(sorted, 0.5))} ms, p95 ${r1(quantile(sorted, 0.95))} ms, max ${r1(sorted.at(-1)!)} ms (${slowest.name})`);
    }
    const slowest = timed.reduce((a, b) => (b.ms > a.ms ? b : a), timed[0]!);
    const mask = await maskRow(engine, slowest.name, slowest.schema, () => ++n);
    log(`  mask on the slowest (${slowest.name}): ${mask.constrained_ms_per_token} ms/token constrained, ${mask.unconstrained_ms_per_token} unconstrained (×${mask.ratio})`);
    const everyday: MaskRow[] = [];
    for (const { name, schema } of everydaySchemas()) {
      const row = await maskRow(engine, name, schema, () => ++n);
      log(`  mask on ${name}: ${row.constrained_ms_per_token} ms/token constrained, ${row.unconstrained_ms_per_token} unconstrained (×${row.ratio})`);
      everyday.push(row);
    }
    return { compile: compileRows, mask, everyday_masks: everyday };
  } finally {
    await engine.languageModel?.dispose();
  }
}

/** Schemas whose strings a reply spends most of its tokens in: the mask's everyday cost. */
function everydaySchemas(): { name: string; schema: JsonSchema }[] {
  const one = (schema: JsonSchema): JsonSchema => ({ type: 'object', properties: { note: schema }, required: ['note'], additionalProperties: false });
  const user = librarySchemas()[0]!;
  return [
    { name: 'a free-text string', schema: one({ type: 'string' }) },
    { name: 'a string of at most 40 characters', schema: one({ type: 'string', maxLength: 40 }) },
    { name: 'an unanchored pattern (^a)', schema: one({ type: 'string', pattern: '^a' }) },
    { name: 'an e-mail of at most 40 characters (the bound kept by the matcher)', schema: one({ type: 'string', format: 'email', maxLength: 40 }) },
    user,
  ];
}

/** Interleaved pairs of a mask row: one run under the schema and one without, in turn. */
const MASK_PAIRS = 5;

/**
 * Greedy streamed chat under `schema` against the same chat without it: ms per token after the
 * first, over MASK_PAIRS interleaved pairs (after one warm run under the schema, which compiles
 * it), the pairs' order alternating. Each side is the median of its runs, and the ratio is the
 * median of the pairs' own ratios, so that a slow spell of this machine lands on both sides.
 */
async function maskRow(engine: Engine, name: string, schema: JsonSchema, id: () => number): Promise<MaskRow> {
  const tokens = 32;
  const perToken = async (format: unknown) => {
    const started = performance.now();
    let first = 0;
    let count = 0;
    const body = { model: 'jev', messages: [{ role: 'user' as const, content: 'Fill in the record.' }], max_tokens: tokens, temperature: 0, stream: true, ...(format ? { response_format: format } : {}) };
    await engine.chat(body, { id: `mask-${id()}` }, (chunk) => {
      if (!chunk.choices[0]?.delta.content) return;
      count++;
      if (count === 1) first = performance.now();
    });
    return count > 1 ? (performance.now() - first) / (count - 1) : performance.now() - started;
  };
  const format = { type: 'json_schema', json_schema: { name: 'mask', schema } };
  await perToken(format);
  const under: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < MASK_PAIRS; i++) {
    const first = i % 2 === 0 ? format : null;
    const a = await perToken(first);
    const b = await perToken(first ? null : format);
    under.push(first ? a : b);
    without.push(first ? b : a);
  }
  const ratio = median(under.map((c, i) => c / without[i]!));
  return { schema: name, tokens, constrained_ms_per_token: r1(median(under)), unconstrained_ms_per_token: r1(median(without)), ratio: Math.round(ratio * 100) / 100 };
}

/** The rows as a markdown table, for docs. */
export function compileTable(out: { compile: CompileRow[]; mask: MaskRow | null; everyday_masks?: MaskRow[] }): string[] {
  const lines = ['| schemas | count | compile p50 | p95 | max | slowest |', '|---|---:|---:|---:|---:|---|'];
  for (const r of out.compile) lines.push(`| ${r.set} | ${r.schemas} | ${r.p50_ms} ms | ${r.p95_ms} ms | ${r.max_ms} ms | ${r.slowest} |`);
  if (out.mask) lines.push('', `Mask on the slowest (${out.mask.schema}): ${out.mask.constrained_ms_per_token} ms a token under the grammar, ${out.mask.unconstrained_ms_per_token} without (×${out.mask.ratio}), greedy, ${out.mask.tokens} tokens, streamed, per token after the first.`);
  if (out.everyday_masks?.length) {
    lines.push('', '| mask on | ms a token under the grammar | without | ratio |', '|---|---:|---:|---:|');
    for (const m of out.everyday_masks) lines.push(`| ${m.schema} | ${m.constrained_ms_per_token} | ${m.unconstrained_ms_per_token} | ×${m.ratio} |`);
  }
  return lines;
}
