/**
 * Structured output cannot pass by luck: random schemas of the enforced subset (fast-check,
 * test/support/schema-arbitrary.ts), answered by the random-weight model of every family
 * (Qwen2.5, Qwen3, Llama 3.2, Phi-3.5, Gemma 3: their real tokenizers and templates) at
 * temperature 0 and 1, must come back as JSON that ajv (an independent validator, with
 * ajv-formats, for the draft the schema declares: each schema is written in one of drafts 4, 6, 7,
 * 2019-09 and 2020-12, test/support/draft-validators.ts) accepts whenever the reply ends with
 * finish_reason "stop"; a reply that reaches
 * max_tokens says "length". Random weights make no choice a trained model would: every token the
 * grammar allows is about as likely as any other, the hardest case for a grammar's bounds.
 *
 * The schemas are drawn once (seeded). Every family answers its share of them (schema i goes to
 * family i mod 5), compiling each schema once, alternately at temperature 0 and at temperature 1
 * with a seed of its own (one schema in eight with a second seed): 200 schemas, 225 replies.
 * STRUCTURED_FULL=1 runs the whole grid instead: every family, every schema, both temperatures
 * (about nine times the work; docs/structured-output.md gives a run of it). The share took 63 s
 * alone on this 2-core machine (2026-11-29; 96 s before a sampled token under a grammar drew among
 * the allowed tokens only): a reply costs 2–14 ms a token (the vocabulary's size: the forward
 * pass's logits, the mask, the draw), a compile 10–500 ms.
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatCompletion, JsonSchema } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { GENERATED, loadEngine } from '../support/models.ts';
import { validatorFor } from '../support/draft-validators.ts';
import { DRAFTS, inDraft, responseSchema, type Draft } from '../support/schema-arbitrary.ts';

const SCHEMAS = Number(process.env['STRUCTURED_SCHEMAS'] ?? 200);
const FULL = process.env['STRUCTURED_FULL'] === '1';
const MAX_TOKENS = 96;
const FAMILIES = ['tiny-random-qwen2', 'tiny-random-qwen3', 'tiny-random-llama3', 'tiny-random-phi3', 'tiny-random-gemma3'];
// Each schema written in one of the five drafts (by its turn, so that every family gets every draft), declared with $schema.
const DRAFT_ORDER = Object.keys(DRAFTS) as Draft[];
const schemas = fc.sample(responseSchema, { numRuns: SCHEMAS, seed: 2029 }).map((s, i) => inDraft(s, DRAFT_ORDER[Math.floor(i / FAMILIES.length) % DRAFT_ORDER.length]!));

describe.each(FAMILIES.map((f, k) => [f, k] as const))('random schemas on %s', (family, k) => {
  const present = existsSync(join(GENERATED, family, 'onnx', 'model.onnx'));
  let engine: Engine;
  const tally = { runs: 0, stop: 0, length: 0, valid: 0, tokens: 0, ms: 0 };
  beforeAll(async () => {
    if (present) engine = await loadEngine(GENERATED, family, 'fp32', { prefixCacheBytes: 0 });
  });
  afterAll(() => {
    if (!present) return;
    const c = engine.grammars.counters();
    console.log(
      `${family}: ${tally.runs} replies (${tally.tokens} tokens, ${(tally.ms / Math.max(1, tally.tokens)).toFixed(1)} ms a token), ${tally.stop} ended in the grammar (valid: ${tally.valid}), ${tally.length} at max_tokens; ${c.compiles} compiles in ${Math.round(c.compileMs)} ms`,
    );
  });

  const mine = schemas.map((schema, i) => ({ schema, i })).filter(({ i }) => FULL || i % FAMILIES.length === k);
  it.skipIf(!present).each(mine)('schema $i: every reply that ends validates', async ({ schema, i }) => {
    const validate = validatorFor(schema); // ajv for the schema's own draft
    // A family's schemas alternate between temperature 0 and 1; one in eight gets a second seed.
    // STRUCTURED_FULL=1: both temperatures for every schema.
    const turn = Math.floor(i / FAMILIES.length);
    const runs: { temperature: number; seed: number }[] = [];
    if (FULL || turn % 2 === 0) runs.push({ temperature: 0, seed: 0 });
    if (FULL || turn % 2 === 1) runs.push({ temperature: 1, seed: 1000 + i });
    if (turn % 8 === 1) runs.push({ temperature: 1, seed: 2000 + i });
    for (const { temperature, seed } of runs) {
      const started = performance.now();
      const res = (await engine.chat(
        {
          model: 'jev',
          messages: [{ role: 'user', content: 'Fill in the record.' }],
          temperature,
          seed,
          max_tokens: MAX_TOKENS,
          reasoning_effort: 'none',
          response_format: { type: 'json_schema', json_schema: { name: 'record', schema } },
        },
        { id: `${family}-${i}-${temperature}-${seed}` },
      )) as ChatCompletion;
      const choice = res.choices[0]!;
      const text = choice.message.content ?? '';
      const where = `schema ${i} ${JSON.stringify(schema)} at temperature ${temperature}, seed ${seed}: ${JSON.stringify(text)}`;
      tally.runs++;
      tally.tokens += res.usage.completion_tokens;
      tally.ms += performance.now() - started;
      if (choice.finish_reason === 'length') {
        tally.length++;
        expect(res.usage.completion_tokens, where).toBe(MAX_TOKENS);
        continue;
      }
      expect(choice.finish_reason, where).toBe('stop');
      expect(res.usage.completion_tokens, where).toBeLessThan(MAX_TOKENS);
      tally.stop++;
      let value: unknown;
      expect(() => (value = JSON.parse(text)), where).not.toThrow();
      expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
      tally.valid++;
    }
  });

  it.skipIf(!present)('most replies end inside the grammar, and every matcher was disposed', () => {
    // Not vacuous: a grammar that let a random model wander would end at max_tokens instead.
    expect(tally.stop).toBeGreaterThan(tally.runs * 0.8);
    const c = engine.grammars.counters();
    expect(c.matchersMade).toBe(c.matchersDisposed);
    expect(c.matchersMade).toBe(tally.runs);
    // Each distinct schema compiled once (a schema drawn twice is found in the cache).
    expect(c.compiles).toBe(new Set(mine.map(({ schema }) => JSON.stringify(schema))).size);
  });
});
