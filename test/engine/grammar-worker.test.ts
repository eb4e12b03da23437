/**
 * The stall drill (issue 57): a schema whose grammar takes far longer than the compile's bound to
 * compile (64 word patterns under one property: ~130 s of xgrammar on tiny-random-llama3's
 * 128k-token vocabulary on a quiet machine, test/support/stall-schema.ts) gets 422
 * `schema_too_complex` within the bound plus 1 s, naming that property;
 * decisions and unconstrained chats sent meanwhile are answered while it compiles; the engine's
 * model stays loaded, the grammar worker alone is replaced; structured output works after it.
 * Also: the per-token mask comes from the grammar worker (the same replies as the in-thread
 * backend), and the memory bound.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JevError, type ChatCompletion, type JsonSchema } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { heaviestPart } from '../../src/engine/grammar/schema-weight.ts';
import { WorkerGrammarBackend } from '../../src/engine/grammar/worker-grammar-backend.ts';
import { PERSON_SCHEMA } from '../support/person-schema.ts';
import { STALL_PATTERNS, wordPatterns } from '../support/stall-schema.ts';
import { GENERATED, loadEngine } from '../support/models.ts';

const MODEL = 'tiny-random-llama3';
const BOUND_MS = 3_000;
/** Its `note` holds the whole weight: ~130 s to compile on this vocabulary on a quiet machine, 43× the bound. */
const HUGE: JsonSchema = { type: 'object', properties: { id: { type: 'integer' }, note: wordPatterns(STALL_PATTERNS) }, required: ['id', 'note'] };
const present = existsSync(join(GENERATED, MODEL, 'onnx', 'model.onnx'));
let n = 0;
const call = () => ({ id: `gw${++n}` });
const schemaFormat = (schema: JsonSchema) => ({ type: 'json_schema', json_schema: { name: 'out', schema } });

describe('heaviestPart: the part of a schema whose grammar grows', () => {
  it('descends to the part that holds most of the weight', () => {
    expect(heaviestPart(HUGE).path).toBe('.properties.note');
    expect(heaviestPart({ type: 'array', items: { anyOf: [{ type: 'boolean' }, { type: 'string', pattern: '^(a|b){1,200}$' }] }, maxItems: 10 }).path).toBe('.items.anyOf[1]');
    // No part dominates: the whole.
    expect(heaviestPart({ type: 'object', properties: { a: { type: 'string', maxLength: 50 }, b: { type: 'string', maxLength: 50 } } }).path).toBe('');
  });
});

describe.skipIf(!present)(`grammar worker on ${MODEL}`, () => {
  let engine: Engine;
  const chat = (body: Record<string, unknown>) => engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 40, ...body }, call()) as Promise<ChatCompletion>;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, MODEL, 'fp32', { prefixCacheBytes: 0, grammar: { compileMs: BOUND_MS } });
    // Warm: xgrammar and the vocabulary's tables in a grammar worker (not counted in the bound).
    await chat({ temperature: 0, response_format: schemaFormat({ type: 'boolean' }) });
  }, 120_000);
  afterAll(() => (engine.grammars.backend as WorkerGrammarBackend).close());

  it('the stall drill: 422 within the bound + 1 s, other requests answered meanwhile, nothing restarts', async () => {
    const backend = engine.grammars.backend as WorkerGrammarBackend;
    const before = await engine.status();
    const retired = backend.retired;
    // How late the engine's thread runs its timers meanwhile (it serves the other requests; the machine may be loaded): a reply cannot leave sooner.
    let lag = 0;
    let tick = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      lag = Math.max(lag, now - tick - 20);
      tick = now;
    }, 20);
    const t0 = performance.now();
    const stalled = chat({ temperature: 0, response_format: schemaFormat(HUGE) }).then(
      () => null,
      (e: unknown) => ({ e, at: performance.now() - t0 }),
    );
    // While it compiles: unconstrained chats and decisions, answered by the engine meanwhile.
    const answered: number[] = [];
    for (let i = 0; i < 3; i++) {
      await chat({ temperature: 0, max_tokens: 4 });
      answered.push(performance.now() - t0);
      await engine.decide({ model: 'jev', state: 'A ticket about a refund.', questions: { q: { type: 'choice', instructions: 'Pick one.', criteria: { yes: null, no: null } } } }, call());
      answered.push(performance.now() - t0);
    }
    const out = await stalled;
    clearInterval(probe);
    expect(out, 'the huge schema was compiled within the bound: pick a larger one').not.toBeNull();
    const e = out!.e as JevError;
    expect(e.code).toBe('schema_too_complex');
    expect(e.status).toBe(422);
    expect(e.param).toBe('response_format.json_schema.schema.properties.note');
    expect(out!.at).toBeGreaterThanOrEqual(BOUND_MS);
    expect(out!.at).toBeLessThan(BOUND_MS + 1_000 + lag);
    // The first chat was answered before the bound: the compile did not hold the engine.
    expect(answered[0]).toBeLessThan(Math.min(out!.at, BOUND_MS));
    // The model was not reloaded; one grammar worker was retired.
    const after = await engine.status();
    expect(after.state).toBe('ready');
    expect(engine.languageModel).not.toBeNull();
    expect(after.counters.forwardPasses).toBeGreaterThan(before.counters.forwardPasses);
    expect(backend.retired).toBe(retired + 1);
    expect(engine.grammars.counters().tooComplex).toBeGreaterThanOrEqual(1);
    const small = await chat({ temperature: 0, response_format: schemaFormat({ enum: ['x', 'y'] }) });
    expect(['"x"', '"y"']).toContain(small.choices[0]!.message.content);
    // Structured output after it: a new worker compiles; the reply validates.
    const res = await chat({ temperature: 1, seed: 3, max_tokens: 120, response_format: schemaFormat(PERSON_SCHEMA) });
    const ajv = new Ajv2020({ strict: false });
    if (res.choices[0]!.finish_reason === 'stop') expect(ajv.validate(PERSON_SCHEMA, JSON.parse(res.choices[0]!.message.content!))).toBe(true);
    const c = engine.grammars.counters();
    expect(c.matchersDisposed).toBe(c.matchersMade);
  }, 120_000);

  it('a cancel while its grammar compiles ahead ends the call at once, not when the compile ends', async () => {
    const id = `gw-cancel-${++n}`;
    const t0 = performance.now();
    const pending = engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 40, temperature: 0, response_format: schemaFormat(HUGE) }, { id }).then(
      () => null,
      (e: unknown) => ({ e, at: performance.now() - t0 }),
    );
    await new Promise((r) => setTimeout(r, 300)); // the compile has begun on the grammar worker
    await engine.cancel(id);
    const out = await pending;
    expect(out, 'the call ended in an answer').not.toBeNull();
    expect((out!.e as Error).name).toBe('AbortError');
    // Ended by the cancel (300 ms in), well before the compile's bound would have ended it.
    expect(out!.at).toBeLessThan(BOUND_MS);
    // The engine serves on: a chat and a schema reply after it.
    const after = await chat({ temperature: 0, max_tokens: 4 });
    expect(after.choices[0]!.finish_reason).toMatch(/stop|length/);
    const small = await chat({ temperature: 0, response_format: schemaFormat({ enum: ['x', 'y'] }) });
    expect(['"x"', '"y"']).toContain(small.choices[0]!.message.content);
  }, 120_000);
});
