/**
 * response_format in the engine (src/engine/grammar/, chat/constraint.ts) on generated family
 * models and TinyStories: the constraint is real (the same requests unconstrained do not parse),
 * composes with sampling, seeds, stop, max_tokens, logprobs and streaming, starts after a
 * thinking model's </think>, survives a cancel in the middle, compiles each schema once, and says
 * so clearly where the model's vocabulary cannot write JSON at all.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { JevError, type ChatCompletion, type ChatCompletionChunk, type JsonSchema } from '../../src/contract/index.ts';
import { stopTokenIds } from '../../src/engine/chat/chat.ts';
import { chatPrompt } from '../../src/engine/chat/chat-prompt.ts';
import { constraintStart, maskLogProbs, ReplyConstraint } from '../../src/engine/chat/constraint.ts';
import { maskAllows, type CompiledGrammar, type GrammarBackend, type GrammarMatcher } from '../../src/engine/grammar/backend.ts';
import { GrammarCache } from '../../src/engine/grammar/grammar-cache.ts';
import { PERSON_SCHEMA } from '../support/person-schema.ts';
import type { TokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { XGrammarBackend } from '../../src/engine/grammar/xgrammar-backend.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { GENERATED, loadEngine, TINYSTORIES, VENDORED } from '../support/models.ts';

const ajv = new Ajv2020({ strict: false });
let n = 0;
const call = () => ({ id: `so${++n}` });
const PERSON: JsonSchema = PERSON_SCHEMA;
const schemaFormat = (schema: JsonSchema) => ({ type: 'json_schema', json_schema: { name: 'out', schema } });
const MESSAGES = [{ role: 'user', content: 'Describe the user as JSON.' }];
const present = (id: string, root = GENERATED) => existsSync(join(root, id, 'onnx', 'model.onnx'));

function parsesAs(schema: JsonSchema, text: string): boolean {
  try {
    return ajv.validate(schema, JSON.parse(text)) as boolean;
  } catch {
    return false;
  }
}

describe.skipIf(!present('tiny-random-llama3'))('response_format on tiny-random-llama3', () => {
  let engine: Engine;
  const chat = (body: Record<string, unknown>, onChunk?: (c: ChatCompletionChunk) => void, handle = call()) =>
    engine.chat({ model: 'jev', messages: MESSAGES, max_tokens: 120, ...body }, handle, onChunk) as Promise<ChatCompletion>;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, 'tiny-random-llama3', 'fp32', { prefixCacheBytes: 0 });
  });

  it('the constraint is real: constrained replies validate, the same requests unconstrained do not parse', async () => {
    for (const [temperature, seed] of [[0, 0], [1, 1], [1, 2], [0.7, 3]] as const) {
      const constrained = await chat({ temperature, seed, response_format: schemaFormat(PERSON) });
      const free = await chat({ temperature, seed, max_tokens: 16 });
      expect(constrained.choices[0]!.finish_reason).toBe('stop');
      expect(parsesAs(PERSON, constrained.choices[0]!.message.content!), constrained.choices[0]!.message.content!).toBe(true);
      expect(() => JSON.parse(free.choices[0]!.message.content!)).toThrow();
    }
    const object = await chat({ temperature: 1, seed: 4, response_format: { type: 'json_object' } });
    if (object.choices[0]!.finish_reason === 'stop') {
      const value = JSON.parse(object.choices[0]!.message.content!);
      expect(typeof value === 'object' && value !== null && !Array.isArray(value)).toBe(true);
    }
  });

  it('one line: ", " and ": " separators, no newline', async () => {
    const res = await chat({ temperature: 0, response_format: schemaFormat(PERSON) });
    const text = res.choices[0]!.message.content!;
    expect(text).not.toMatch(/\n/);
    expect(text.startsWith('{"name": "')).toBe(true);
  });

  it('a seed reproduces the reply; greedy with and without logprobs writes the same tokens', async () => {
    const a = await chat({ temperature: 1, seed: 42, response_format: schemaFormat(PERSON) });
    const b = await chat({ temperature: 1, seed: 42, response_format: schemaFormat(PERSON) });
    expect(b.choices[0]!.message.content).toBe(a.choices[0]!.message.content);
    const greedy = await chat({ temperature: 0, response_format: schemaFormat(PERSON) });
    const withLogprobs = await chat({ temperature: 0, logprobs: true, response_format: schemaFormat(PERSON) });
    expect(withLogprobs.choices[0]!.message.content).toBe(greedy.choices[0]!.message.content);
  });

  it('max_tokens inside the JSON: finish_reason "length" and the partial text', async () => {
    const full = await chat({ temperature: 0, response_format: schemaFormat(PERSON) });
    const cut = await chat({ temperature: 0, max_tokens: 4, response_format: schemaFormat(PERSON) });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.usage.completion_tokens).toBe(4);
    expect(full.choices[0]!.message.content!.startsWith(cut.choices[0]!.message.content!)).toBe(true);
    expect(() => JSON.parse(cut.choices[0]!.message.content!)).toThrow();
  });

  it('streams: the deltas join into the content, which validates', async () => {
    const chunks: ChatCompletionChunk[] = [];
    const res = await chat({ temperature: 1, seed: 9, stream: true, response_format: schemaFormat(PERSON) }, (c) => void chunks.push(c));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(res.choices[0]!.message.content);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(parsesAs(PERSON, res.choices[0]!.message.content!)).toBe(true);
  });

  it('logprobs are those of the constrained distribution: only allowed tokens, renormalized', async () => {
    // A boolean: the first token is one of the few that begin "true" or "false".
    const res = await chat({ temperature: 1, seed: 5, logprobs: true, top_logprobs: 20, response_format: schemaFormat({ type: 'boolean' }) });
    const content = res.choices[0]!.logprobs!.content;
    expect(content.map((e) => e.token).join('')).toBe(res.choices[0]!.message.content);
    expect(['true', 'false']).toContain(res.choices[0]!.message.content);
    const first = content[0]!;
    expect(first.top_logprobs.length).toBeLessThan(20);
    const mass = first.top_logprobs.reduce((s, t) => s + Math.exp(t.logprob), 0);
    expect(mass).toBeCloseTo(1, 6);
    for (const t of first.top_logprobs) expect('true'.startsWith(t.token) || 'false'.startsWith(t.token), t.token).toBe(true);
  });

  it('maskLogProbs: -Infinity outside the mask, the rest a distribution, their differences kept', () => {
    const logp = Float64Array.from([-1, -2, -3, -4, -5].map((x) => x - Math.log([1, 2, 3, 4, 5].reduce((s, k) => s + Math.exp(-k), 0))));
    const mask = new Int32Array([0b10110]);
    const out = maskLogProbs(Float64Array.from(logp), mask);
    expect(out[0]).toBe(-Infinity);
    expect(out[3]).toBe(-Infinity);
    expect(Math.exp(out[1]!) + Math.exp(out[2]!) + Math.exp(out[4]!)).toBeCloseTo(1, 12);
    expect(out[1]! - out[2]!).toBeCloseTo(logp[1]! - logp[2]!, 12);
    expect(out[2]! - out[4]!).toBeCloseTo(logp[2]! - logp[4]!, 12);
  });

  it('a stop sequence still cuts the reply (the client asked for it)', async () => {
    const res = await chat({ temperature: 0, stop: ['age'], response_format: schemaFormat(PERSON) });
    expect(res.choices[0]!.finish_reason).toBe('stop');
    expect(res.choices[0]!.message.content).toMatch(/^\{"name": ".*", "$/);
  });

  it('a cancel in the middle of a constrained stream leaves no matcher behind, and the engine answers as before', async () => {
    const body = { temperature: 1, seed: 21, response_format: schemaFormat(PERSON) };
    const before = await chat(body);
    const made = engine.grammars.counters().matchersMade;
    const handle = call();
    let seen = 0;
    const err = await chat({ ...body, stream: true }, () => {
      seen += 1;
      if (seen === 4) void engine.cancel(handle.id);
    }, handle).catch((e: unknown) => e);
    expect((err as JevError).code).toBe('aborted');
    expect(seen).toBeLessThanOrEqual(5);
    // The next request waits in the engine's queue until the cancelled one has let go of its matcher.
    const after = await chat(body);
    expect(after.choices[0]!.message.content).toBe(before.choices[0]!.message.content);
    const end = engine.grammars.counters();
    expect(end.matchersMade).toBe(made + 2);
    expect(end.matchersDisposed).toBe(end.matchersMade);
  });

  it('the compile cache: the same schema again is not compiled again; another property order is another grammar', async () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'boolean' }, b: { enum: [1, 2] } }, required: ['a', 'b'] };
    const start = engine.grammars.counters();
    await chat({ temperature: 0, response_format: schemaFormat(schema) });
    const once = engine.grammars.counters();
    expect(once.compiles).toBe(start.compiles + 1);
    for (let i = 0; i < 3; i++) await chat({ temperature: 1, seed: i, response_format: schemaFormat(schema) });
    const again = engine.grammars.counters();
    expect(again.compiles).toBe(once.compiles);
    expect(again.hits).toBe(once.hits + 3);
    const reordered = await chat({ temperature: 0, response_format: schemaFormat({ ...schema, properties: { b: { enum: [1, 2] }, a: { type: 'boolean' } } }) });
    expect(engine.grammars.counters().compiles).toBe(once.compiles + 1);
    expect(reordered.choices[0]!.message.content).toMatch(/^\{"b": /);
  });

  it('tools with a response format: the reply is calls or the schema\'s JSON, nothing else; a tool without parameters is called with {}', async () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    for (const seed of [0, 1, 2]) {
      const res = await chat({ tools, tool_choice: 'auto', temperature: 1, seed, response_format: schemaFormat(PERSON) });
      const choice = res.choices[0]!;
      if (choice.message.tool_calls) expect(choice.message.tool_calls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual(choice.message.tool_calls.map(() => ['f', {}]));
      else if (choice.finish_reason === 'stop') expect(parsesAs(PERSON, choice.message.content!), choice.message.content!).toBe(true);
    }
    const forced = await chat({ tools, tool_choice: 'required', parallel_tool_calls: false });
    expect(forced.choices[0]!.finish_reason).toBe('tool_calls');
    expect(forced.choices[0]!.message.tool_calls!.map((c) => c.function)).toEqual([{ name: 'f', arguments: '{}' }]);
  });
});

describe.skipIf(!present('tiny-random-qwen3'))('a thinking model: the grammar starts after </think>', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, 'tiny-random-qwen3', 'fp32', { prefixCacheBytes: 0 });
  });

  it('where the prompt opens, closes or leaves the think block', () => {
    const lm = engine.languageModel!;
    const on = chatPrompt(lm, MESSAGES as never, { enableThinking: true }).text;
    const off = chatPrompt(lm, MESSAGES as never, { enableThinking: false }).text;
    expect(constraintStart(true, on)).toBe('may-think');
    expect(constraintStart(true, off)).toBe('now');
    expect(constraintStart(true, `${on}<think>\n`)).toBe('thinking');
    expect(constraintStart(false, on)).toBe('now');
  });

  it('may open <think>, then thinks freely (never stopping), then writes the grammar', async () => {
    const lm = engine.languageModel!;
    const stops = stopTokenIds(lm);
    const cache = new GrammarCache(new XGrammarBackend());
    const constraint = await ReplyConstraint.open(cache, lm, { type: 'json_schema', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }, stops, 'may-think');
    try {
      const [open] = lm.encode('<think>', false);
      const [close] = lm.encode('</think>', false);
      const [brace] = lm.encode('{"', false);
      let mask = await constraint.nextMask();
      expect(maskAllows(mask, open!)).toBe(true);
      expect(maskAllows(mask, brace!)).toBe(true);
      constraint.accept(open!, '<think>');
      expect(constraint.phase).toBe('thinking');
      mask = await constraint.nextMask();
      const word = lm.encode(' hmm', false)[0]!;
      expect(maskAllows(mask, word)).toBe(true);
      expect(maskAllows(mask, close!)).toBe(true);
      for (const id of stops) expect(maskAllows(mask, id)).toBe(false);
      constraint.accept(word, '<think> hmm');
      constraint.accept(close!, '<think> hmm</think>');
      expect(constraint.phase).toBe('now');
      mask = await constraint.nextMask();
      expect(maskAllows(mask, brace!)).toBe(true);
      expect(maskAllows(mask, word)).toBe(false);
      expect(maskAllows(mask, open!)).toBe(false);
    } finally {
      constraint.dispose();
      cache.clear();
    }
  });

  it('reasoning_effort "none": no reasoning, the content validates; thinking on: JSON after the thought or "length"', async () => {
    const schema: JsonSchema = { type: 'object', properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['ok', 'n'] };
    for (const seed of [1, 2, 3]) {
      const off = (await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 1, seed, max_tokens: 40, reasoning_effort: 'none', response_format: schemaFormat(schema) }, call())) as ChatCompletion;
      expect(off.choices[0]!.message.reasoning_content).toBe('');
      expect(parsesAs(schema, off.choices[0]!.message.content!)).toBe(true);
      const on = (await engine.chat({ model: 'jev', messages: MESSAGES, temperature: 1, seed, max_tokens: 40, response_format: schemaFormat(schema) }, call())) as ChatCompletion;
      if (on.choices[0]!.finish_reason === 'stop') expect(parsesAs(schema, on.choices[0]!.message.content!), JSON.stringify(on.choices[0]!.message)).toBe(true);
      else expect(on.usage.completion_tokens).toBe(40);
    }
  });
});

describe.skipIf(!present(TINYSTORIES, VENDORED))('a vocabulary that cannot write JSON: TinyStories-656K', () => {
  it('answers 422 at response_format before the first chunk, for json_object and json_schema', async () => {
    const engine = await loadEngine(VENDORED, TINYSTORIES);
    for (const response_format of [{ type: 'json_object' }, schemaFormat(PERSON)]) {
      const chunks: ChatCompletionChunk[] = [];
      const err = await engine.chat({ model: 'jev', messages: MESSAGES, stream: true, response_format }, call(), (c) => void chunks.push(c)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(JevError);
      expect({ code: (err as JevError).code, status: (err as JevError).status, param: (err as JevError).param }).toEqual({ code: 'unprocessable', status: 422, param: 'response_format' });
      expect((err as JevError).message).toMatch(/cannot write this response_format/);
      expect(chunks).toEqual([]);
    }
    const c = engine.grammars.counters();
    expect(c.matchersMade).toBe(c.matchersDisposed);
  });
});

describe('the grammar cache', () => {
  /** A backend that compiles nothing, counting what it is asked and what is disposed. */
  function countingBackend() {
    const log = { compiled: [] as string[], disposed: [] as string[], forgotten: 0 };
    const backend: GrammarBackend = {
      name: 'counting',
      compile: async (_v, format) => {
        const key = JSON.stringify(format);
        log.compiled.push(key);
        return { key, dispose: () => void log.disposed.push(key) } satisfies CompiledGrammar;
      },
      matcher: async () => ({ fillNextTokenBitmask: async () => {}, accept: () => true, acceptFirst: async () => -1, isTerminated: () => false, dispose: () => {} }) satisfies GrammarMatcher,
      forget: () => void log.forgotten++,
    };
    return { backend, log };
  }
  const vocab = { key: 'v' } as TokenVocabulary;
  const format = (i: number) => ({ type: 'json_schema' as const, schema: { const: i } });

  it('keeps at most maxGrammars, disposing the least recently used; clear disposes the rest', async () => {
    const { backend, log } = countingBackend();
    const cache = new GrammarCache(backend, 2);
    await cache.grammar(vocab, format(1));
    await cache.grammar(vocab, format(2));
    await cache.grammar(vocab, format(1)); // 1 is now the most recent
    await cache.grammar(vocab, format(3)); // evicts 2
    await Promise.resolve();
    expect(log.compiled.length).toBe(3);
    expect(log.disposed).toEqual([JSON.stringify(format(2))]);
    expect(cache.counters()).toMatchObject({ compiles: 3, hits: 1, grammars: 2 });
    cache.clear();
    await Promise.resolve();
    expect(log.disposed.length).toBe(3);
    expect(cache.counters().grammars).toBe(0);
  });

  it('two requests for one schema at once compile it once', async () => {
    const { backend, log } = countingBackend();
    const cache = new GrammarCache(backend);
    await Promise.all([cache.grammar(vocab, format(7)), cache.grammar(vocab, format(7))]);
    expect(log.compiled.length).toBe(1);
  });

  it("the schema compiler's refusal is a 400 at the keyword, with its reason (before xgrammar sees the schema)", async () => {
    const lmFree: TokenVocabulary = { key: 'chars', encoded: ['a', '{', '}', '"', ''], vocabType: 'raw', prependSpace: false, width: 5, stopTokenIds: [4], jsonSafe: new Int32Array([-1]) };
    const backend = new XGrammarBackend();
    const err = await backend.compile(lmFree, { type: 'json_schema', schema: { type: 'strin' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JevError);
    expect({ code: (err as JevError).code, param: (err as JevError).param }).toEqual({ code: 'invalid_request', param: 'response_format.json_schema.schema.type' });
    expect((err as JevError).message).toMatch(/"strin" is not a JSON-schema type/);
    backend.forget(lmFree);
  });
});
