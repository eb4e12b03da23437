/**
 * Length bounds kept by the matcher (json-schema/length-guard.ts, length-guard-tracker.ts): a
 * `maxLength` beside an unbounded format or pattern, which as one automaton xgrammar compiled in
 * 10–54 s (or was refused past 4000 states). Checked against independent computations:
 * - walked character by character through a real xgrammar matcher (test/support/grammar-walk.ts),
 *   every text is taken exactly when JavaScript's RegExp matches the format's pattern and the
 *   string has at most `max` code points; where the bound also fits in the grammar, the guarded
 *   grammar and the grammar holding the bound take the same texts;
 * - on a real 151,646-token vocabulary (Qwen2.5's), the mask the tracker filters equals the mask
 *   from checking every token one by one, at every step of replies written under the schema;
 * - replies of the random-weight Qwen2.5 under zod's `.email().max()` and Pydantic's HttpUrl, at
 *   temperature 1, validate with ajv (+ formats) and reach the bound;
 * - where another string could stand in the same place, the bound stays in the grammar.
 */
import fc from 'fast-check';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatTool, JsonSchema } from '../../src/contract/index.ts';
import { callTags, toolCallFormat, toolCallPlan } from '../../src/engine/chat/tool-format.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { FORMAT_PATTERNS } from '../../src/engine/grammar/format-patterns.ts';
import { schemaToEbnf, schemaToGrammar } from '../../src/engine/grammar/json-schema/compile.ts';
import { ROOT_PLACE, type GuardPlace, type KeyStep } from '../../src/engine/grammar/json-schema/length-guard.ts';
import { LengthGuards } from '../../src/engine/grammar/length-guard-tracker.ts';
import { parsePattern } from '../../src/engine/grammar/json-schema/regex.ts';
import { lengthCounted } from '../../src/engine/grammar/json-schema/string-grammar.ts';
import { tokenVocabulary } from '../../src/engine/grammar/token-vocabulary.ts';
import { validatorFor } from '../support/draft-validators.ts';
import { CharWalker } from '../support/grammar-walk.ts';
import { GENERATED, loadEngine } from '../support/models.ts';

const one = (schema: JsonSchema, key = 'e'): JsonSchema => ({ type: 'object', properties: { [key]: schema }, required: [key], additionalProperties: false });
const at = (...keys: KeyStep[]): GuardPlace => ({ keys, under: false });
const under = (...keys: KeyStep[]): GuardPlace => ({ keys, under: true });
const json = (value: unknown) => JSON.stringify(value).replaceAll('":', '": ').replaceAll(',"', ', "');

describe('which strings get a guard', () => {
  it('a bound beside an unbounded format gets one, at its key path; a small automaton keeps the bound in the grammar', () => {
    const { guards } = schemaToGrammar(one({ type: 'string', format: 'email', maxLength: 100 }));
    expect(guards.map((g) => [g.places, g.max])).toEqual([[[at('e')], 100]]);
    expect(schemaToGrammar(one({ type: 'string', pattern: '^[a-z]+$', maxLength: 8 })).guards).toEqual([]);
    expect(schemaToGrammar({ type: 'string', format: 'uri', maxLength: 2083 }).guards.map((g) => g.places)).toEqual([[ROOT_PLACE]]);
    // A string with no pattern: past 8 characters, the bound is the matcher's.
    expect(schemaToGrammar(one({ type: 'string', maxLength: 8 })).guards).toEqual([]);
    expect(schemaToGrammar(one({ type: 'string', minLength: 2, maxLength: 4096 })).guards.map((g) => [g.places, g.max])).toEqual([[[at('e')], 4096]]);
  });

  it("a $ref's string stands wherever the reference is used; through arrays it keeps its member's key path", () => {
    const schema: JsonSchema = { $defs: { Mail: { type: 'string', format: 'email', maxLength: 60 } }, type: 'object', properties: { to: { $ref: '#/$defs/Mail' }, cc: { type: 'array', items: { $ref: '#/$defs/Mail' } } } };
    expect(schemaToGrammar(schema).guards.map((g) => g.places)).toEqual([[at('to'), at('cc')]]);
    // References within references: the paths compose.
    const nested: JsonSchema = {
      $defs: { Mail: { type: 'string', format: 'email', maxLength: 60 }, Party: { type: 'object', properties: { email: { $ref: '#/$defs/Mail' }, name: { type: 'string' } } } },
      type: 'object',
      properties: { contact: { $ref: '#/$defs/Party' }, billing: { type: 'array', items: { $ref: '#/$defs/Party' } } },
    };
    expect(schemaToGrammar(nested).guards.map((g) => g.places)).toEqual([[at('contact', 'email'), at('billing', 'email')]]);
  });

  it('a recursive reference: its strings stand anywhere under the place its chain of uses starts from', () => {
    const node = (extra: Record<string, JsonSchema>): JsonSchema => ({
      $defs: { Node: { type: 'object', properties: { owner: { type: 'string', format: 'email', maxLength: 60 }, children: { type: 'array', items: { $ref: '#/$defs/Node' } }, ...extra } } },
      type: 'object',
      properties: { title: { type: 'string' }, tree: { $ref: '#/$defs/Node' } },
    });
    expect(schemaToGrammar(node({})).guards.map((g) => g.places)).toEqual([[under('tree')]]);
    // Another string anywhere in the tree may stand on the same path as the guarded one.
    expect(schemaToGrammar(node({ label: { type: 'string' } })).guards).toEqual([]);
  });

  it('paths that multiply past 256 (references used in many places within references used in many places) are anywhere', () => {
    const keys = (n: number, schema: JsonSchema) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, schema]));
    const nested = (n: number): JsonSchema => ({
      $defs: { Mail: { type: 'string', format: 'email', maxLength: 60 }, Box: { type: 'object', properties: keys(n, { $ref: '#/$defs/Mail' }) } },
      type: 'object',
      properties: { ...keys(n, { $ref: '#/$defs/Box' }), note: { type: 'string' } },
    });
    expect(schemaToGrammar(nested(16)).guards.map((g) => g.places.length)).toEqual([256]);
    expect(schemaToGrammar(nested(17)).guards).toEqual([]);
  });

  it("the same bound on the same language in several places (OpenAPI's contact and billing e-mails) is one guard's, wherever they meet", () => {
    const email = { type: 'string', format: 'email', maxLength: 100 } as const;
    const party = { type: 'object', properties: { email, name: { type: 'string' } } } as const;
    const { guards } = schemaToGrammar({ type: 'object', properties: { contact: party, billing: party } });
    expect(guards.map((g) => g.places)).toEqual([[at('contact', 'email')], [at('billing', 'email')]]);
    // Two branches that write the same guarded string on the same path.
    expect(schemaToGrammar({ anyOf: [one(email), { ...one(email), properties: { e: email, n: { type: 'number' } } }] }).guards).toHaveLength(2);
    // A different bound on the same path: the matcher could not tell which holds.
    expect(schemaToGrammar({ anyOf: [one(email), one({ ...email, maxLength: 90 })] }).guards).toEqual([]);
  });

  it('where another string may stand in the same place (another branch, a free value, an additional property), the bound stays in the grammar', () => {
    const guarded = { type: 'string', format: 'email', maxLength: 50 } as const;
    const shared: JsonSchema[] = [
      { anyOf: [one(guarded), one({ type: 'string' })] },
      { type: 'object', patternProperties: { '^x': guarded }, additionalProperties: { type: 'string' } },
      { anyOf: [one(guarded), { enum: [{ e: 'x' }] }] },
      { anyOf: [one(guarded), { type: 'object' }] },
      { anyOf: [one(guarded), { type: 'object', properties: { f: { type: 'number' } }, additionalProperties: { type: 'string' } }] },
    ];
    for (const schema of shared) {
      const { ebnf, guards } = schemaToGrammar(schema);
      expect(guards, JSON.stringify(schema)).toEqual([]);
      expect(ebnf).toBe(schemaToEbnf(schema));
    }
    // Another key path, or a branch holding no string: the guard stays. A free object, a constant
    // or a record elsewhere holds strings only under its own key.
    expect(schemaToGrammar({ anyOf: [one(guarded), one({ type: 'string' }, 'f')] }).guards).toHaveLength(1);
    expect(schemaToGrammar({ type: 'object', properties: { e: { anyOf: [guarded, { type: 'null' }] } } }).guards).toHaveLength(1);
    for (const other of [{ type: 'object' }, { enum: [{ e: 'x' }] }, { type: 'object', additionalProperties: { type: 'string' } }, { type: 'array', items: { type: 'object', additionalProperties: true } }, {}] as JsonSchema[]) {
      expect(schemaToGrammar({ type: 'object', properties: { e: guarded, meta: other } }).guards.map((g) => g.places), JSON.stringify(other)).toEqual([[at('e')]]);
    }
    // A record of bounded e-mails: any key. Beside listed properties: any key but theirs (the grammar writes none of them twice).
    expect(schemaToGrammar({ type: 'object', additionalProperties: guarded }).guards.map((g) => g.places)).toEqual([[at({ except: [] })]]);
    const extras = schemaToGrammar({ type: 'object', properties: { e: guarded, name: { type: 'string' } }, additionalProperties: { type: 'string' } });
    expect(extras.guards.map((g) => g.places)).toEqual([[at('e')]]);
    expect(schemaToGrammar({ type: 'object', properties: { name: { type: 'string' } }, additionalProperties: guarded }).guards.map((g) => g.places)).toEqual([[at({ except: ['name'] })]]);
  });
});

describe("a pattern's long counted repetition is a length bound", () => {
  it('where the count is the only freedom of the length (the other parts fixed), the repetition is unbounded and the longest length is the bound', () => {
    const of = (source: string) => lengthCounted(parsePattern(source));
    expect(of('^[0-9a-zA-Z_-]{1,230}$')?.hi).toBe(230);
    expect(of('^[a-z][a-z0-9-]{0,62}$')?.hi).toBe(63);
    expect(of('^id-(\\d|x){1,40}$')?.hi).toBe(43);
    for (const source of ['^a{1,30}b{1,30}$', '^[a-z]{1,16}$', '[a-z]{1,30}', '^[a-f0-9]{24}$', '^(ab|c){1,30}$', '^[a-z]{1,30}x?$']) expect(of(source), source).toBeNull();
    const { guards } = schemaToGrammar(one({ type: 'string', title: 'Mqtt Topic', pattern: '^[0-9a-zA-Z_-]{1,230}$' }));
    expect(guards.map((g) => [g.places, g.max, g.dfa.accept.length])).toEqual([[[at('e')], 230, 2]]);
    // With a smaller maxLength beside it, the smaller bound.
    expect(schemaToGrammar(one({ type: 'string', pattern: '^[a-z]{1,230}$', maxLength: 100 })).guards.map((g) => g.max)).toEqual([100]);
  });

  it('walked through xgrammar: taken exactly when RegExp matches', async () => {
    const walker = new CharWalker();
    try {
      const source = '^[a-z][a-z0-9-]{0,40}$';
      const schema = one({ type: 'string', pattern: source });
      expect(schemaToGrammar(schema).guards.map((g) => g.max)).toEqual([41]);
      const re = new RegExp(source, 'u');
      let taken = 0;
      let over = 0;
      for (const s of ['a'.repeat(41), 'a'.repeat(42), '1abc', 'a-', ...fc.sample(fc.stringMatching(/^[a-z0-9-]{30,46}$/), { numRuns: 80, seed: 61 })]) {
        if (re.test(s)) taken++;
        if (s.length > 41) over++;
        expect(await walker.accepts({ type: 'json_schema', schema }, json({ e: s })), s).toBe(re.test(s));
      }
      expect(taken).toBeGreaterThan(10);
      expect(over).toBeGreaterThan(5);
    } finally {
      walker.clear();
    }
  });
});

describe('guarded strings walked through xgrammar, character by character', () => {
  const walker = new CharWalker(['é']);
  afterAll(() => walker.clear());
  const email = new RegExp(FORMAT_PATTERNS.email, 'u');
  const label = fc.stringMatching(/^[a-z0-9]{1,9}$/);
  const local = fc.stringMatching(/^[a-zA-Z0-9.+_é-]{1,14}$/);
  const address = fc.tuple(local, fc.array(label, { minLength: 1, maxLength: 3 })).map(([l, ds]) => `${l}@${ds.join('.')}`);

  it('an e-mail of at most 24 characters: taken exactly when RegExp matches and the length fits', async () => {
    const max = 24;
    const schema = one({ type: 'string', format: 'email', maxLength: max });
    expect(schemaToGrammar(schema).guards).toHaveLength(1);
    const texts = fc.sample(address, { numRuns: 120, seed: 57 });
    let over = 0;
    let taken = 0;
    for (const s of ['a@b.io', 'a'.repeat(19) + '@b.io', 'a'.repeat(20) + '@b.io', `${'a'.repeat(17)}@${'b'.repeat(6)}`, ...texts]) {
      const expected = email.test(s) && [...s].length <= max;
      if ([...s].length > max) over++;
      if (expected) taken++;
      expect(await walker.accepts({ type: 'json_schema', schema }, json({ e: s })), `${s} (${[...s].length})`).toBe(expected);
    }
    // The sample crosses the bound both ways.
    expect(over).toBeGreaterThan(10);
    expect(taken).toBeGreaterThan(10);
  });

  it('the same texts as the grammar holding the bound, where that grammar is small enough to compile (maxLength 16)', async () => {
    const max = 16;
    const schema = one({ type: 'string', format: 'email', maxLength: max });
    // The same language with the bound in the grammar: a const-free copy the compiler cannot guard (a second string under the same key).
    const inGrammar: JsonSchema = { anyOf: [schema, one({ type: 'string', enum: ['-'] })] };
    expect(schemaToGrammar(inGrammar).guards).toEqual([]);
    for (const s of fc.sample(address, { numRuns: 80, seed: 58 })) {
      const text = json({ e: s });
      expect(await walker.accepts({ type: 'json_schema', schema }, text), s).toBe(await walker.accepts({ type: 'json_schema', schema: inGrammar }, text));
    }
  });

  it('in arrays, beside other members, and at the root; escapes count as one character', async () => {
    const mail = { type: 'string', pattern: '^[a-z"é]+(-[a-z"é]+)*$', maxLength: 20 } as const;
    const schema: JsonSchema = { type: 'object', properties: { name: { type: 'string' }, list: { type: 'array', items: mail } }, required: ['name', 'list'], additionalProperties: false };
    expect(schemaToGrammar(schema).guards).toHaveLength(1);
    const f = { type: 'json_schema' as const, schema };
    expect(await walker.accepts(f, json({ name: 'a-very-long-free-name', list: ['abcdefghi-jklmnopqrs', 'é"é-é', 'x'] }))).toBe(true);
    expect(await walker.accepts(f, json({ name: 'n', list: ['abc', 'abcdefghi-jklmnopqrst'] }))).toBe(false);
    expect(await walker.accepts(f, json({ name: 'n', list: ['é'.repeat(20)] }))).toBe(true);
    expect(await walker.accepts(f, json({ name: 'n', list: ['é'.repeat(21)] }))).toBe(false);
    expect(await walker.accepts(f, json({ name: 'n', list: ['"'.repeat(20)] }))).toBe(true);
    expect(await walker.accepts(f, json({ name: 'n', list: ['"'.repeat(21)] }))).toBe(false);
    // The guard holds on its key path only: the same key elsewhere, and strings in a free object, are free.
    const paths: JsonSchema = { type: 'object', properties: { a: one(mail, 'e'), b: one({ type: 'string' }, 'e'), meta: { type: 'object' } }, required: ['a', 'b', 'meta'], additionalProperties: false };
    expect(schemaToGrammar(paths).guards.map((g) => g.places)).toEqual([[at('a', 'e')]]);
    const p = { type: 'json_schema' as const, schema: paths };
    const long = 'abcdefghi-jklmnopqrst';
    expect(await walker.accepts(p, json({ a: { e: 'abc' }, b: { e: long }, meta: { e: long, a: { e: long }, l: [long] } }))).toBe(true);
    expect(await walker.accepts(p, json({ a: { e: long }, b: { e: 'x' }, meta: {} }))).toBe(false);
    expect(await walker.accepts(p, json({ a: { e: long.slice(1) }, b: { e: 'x' }, meta: {} }))).toBe(true);
    // Additional properties beside a guarded one are free, and additional ones guarded are held under any other key.
    const extra = { type: 'json_schema' as const, schema: { type: 'object', properties: { e: mail }, required: ['e'], additionalProperties: { type: 'string' } } as JsonSchema };
    expect(await walker.accepts(extra, json({ e: 'abc', x: long, y: long }))).toBe(true);
    expect(await walker.accepts(extra, json({ e: long, x: 'a' }))).toBe(false);
    const record = { type: 'json_schema' as const, schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: mail } as JsonSchema };
    expect(await walker.accepts(record, json({ name: long, x: 'abc', y: long.slice(1) }))).toBe(true);
    expect(await walker.accepts(record, json({ name: 'n', x: 'abc', y: long }))).toBe(false);
    const root = { type: 'json_schema' as const, schema: { type: 'string', format: 'email', maxLength: 40 } as JsonSchema };
    expect(await walker.accepts(root, JSON.stringify(`${'x'.repeat(35)}@a.io`))).toBe(true);
    expect(await walker.accepts(root, JSON.stringify(`${'x'.repeat(36)}@a.io`))).toBe(false);
  });
});

describe('tool calls: the guards of each call start at its begin', () => {
  const walker = new CharWalker();
  afterAll(() => walker.clear());
  const mail = { type: 'string', format: 'email', maxLength: 20 } as const;
  const tools: ChatTool[] = [
    { type: 'function', function: { name: 'signup', strict: false, parameters: { type: 'object', properties: { email: mail, name: { type: 'string' } }, required: ['email'], additionalProperties: false } } },
    { type: 'function', function: { name: 'note', strict: false, parameters: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'], additionalProperties: false } } },
  ];
  const ok = 'abcdefghijklm@b.io'; // 18
  const over = 'abcdefghijklmnop@b.io'; // 21

  for (const style of ['hermes', 'llama3-json'] as const) {
    const call = (name: string, email: string) => `${callTags(style, name).begin}${json({ email })}${callTags(style, name).end}`;
    it(`${style}: a bounded argument is held to its bound in its own tool's calls only, whatever text comes before`, async () => {
      const auto = toolCallFormat(toolCallPlan(style, tools, 'auto', style === 'hermes')!, null);
      const forced = toolCallFormat(toolCallPlan(style, tools, 'required', style === 'hermes')!, null);
      // The bound is the matcher's (the compiled grammar keeps guards), not the grammar's.
      for (const f of [auto, forced]) expect(((await walker.grammar(f)) as unknown as { guards: unknown }).guards).not.toBeNull();
      for (const f of [auto, forced]) {
        expect(await walker.accepts(f, call('signup', ok))).toBe(true);
        expect(await walker.accepts(f, call('signup', over))).toBe(false);
        // The other tool's `email` is free.
        expect(await walker.accepts(f, call('note', `${over}${over}`))).toBe(true);
      }
      // Text before a call, with quotes and braces that look like JSON, is nobody's string.
      const text = `Sure: {"email": "${over}${over}"} and "${over}" `;
      expect(await walker.accepts(auto, `${text}${call('signup', ok)}`)).toBe(true);
      expect(await walker.accepts(auto, `${text}${call('signup', over)}`)).toBe(false);
      if (style === 'hermes') {
        // Parallel calls: each call is read from its own begin.
        expect(await walker.accepts(forced, `${call('note', over)}\n${call('signup', ok)}`)).toBe(true);
        expect(await walker.accepts(forced, `${call('signup', ok)}\n${call('signup', over)}`)).toBe(false);
        expect(await walker.accepts(forced, `${call('signup', ok)}\n${call('note', over)}\n${call('signup', ok)}`)).toBe(true);
      }
    }, 120_000);
  }

  it('beside an answer in a response format (the answer could write a begin as its own text), the bounds stay in the grammar', async () => {
    const answer = toolCallFormat(toolCallPlan('hermes', tools, 'auto', false)!, one({ type: 'string' }));
    expect(((await walker.grammar(answer)) as unknown as { guards: unknown }).guards).toBeNull();
    expect(await walker.accepts(answer, `${callTags('hermes', 'signup').begin}${json({ email: ok })}${callTags('hermes', 'signup').end}`)).toBe(true);
    expect(await walker.accepts(answer, `${callTags('hermes', 'signup').begin}${json({ email: over })}${callTags('hermes', 'signup').end}`)).toBe(false);
  }, 120_000);
});

const QWEN = 'tiny-random-qwen2';
const present = existsSync(join(GENERATED, QWEN, 'onnx', 'model.onnx'));

describe.skipIf(!present)(`on ${QWEN}'s vocabulary`, () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine(GENERATED, QWEN);
  }, 120_000);
  afterAll(async () => engine?.languageModel?.dispose());

  const signup = z.toJSONSchema(z.object({ email: z.email().max(30), name: z.string().max(6) })) as JsonSchema;
  const httpUrl: JsonSchema = { type: 'object', properties: { site: { title: 'Site', type: 'string', format: 'uri', minLength: 1, maxLength: 24 } }, required: ['site'] };

  it('the filtered mask equals checking every token, at every step of a reply', async () => {
    const lm = engine.languageModel!;
    const vocab = tokenVocabulary(lm, []);
    const { guards } = schemaToGrammar(signup);
    expect(guards).toHaveLength(1);
    const table = new LengthGuards([{ begin: null, guards }], vocab);
    const reply = await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Sign up.' }], max_tokens: 60, temperature: 1, seed: 11, response_format: { type: 'json_schema', json_schema: { name: 's', schema: signup } } }, { id: 'guard-steps' });
    const text = reply.choices[0]!.message.content!;
    const ids = lm.encode(text, false);
    const tracker = table.start();
    let checked = 0;
    for (const id of [...ids, -1]) {
      const all = new Int32Array(Math.ceil(vocab.width / 32)).fill(-1);
      const filtered = all.slice();
      table.filter(filtered, tracker);
      for (let t = 0; t < vocab.width; t += 7) {
        const bit = ((filtered[t >> 5]! >>> (t & 31)) & 1) === 1;
        expect(bit, `token ${t} after ${checked} steps`).toBe(table.allows(tracker, t));
      }
      checked++;
      if (id >= 0) table.advance(tracker, id);
    }
    expect(checked).toBe(ids.length + 1);
  }, 120_000);

  it("zod's .email().max(30), Pydantic's HttpUrl (maxLength 24) and a free string of at most 20: replies at temperature 1 validate, and reach the bound", async () => {
    // The free string's characters are anything (escapes, split UTF-8 characters: a random model writes both).
    const note = one({ type: 'string', minLength: 2, maxLength: 20 }, 'note');
    for (const [schema, key, max] of [[signup, 'email', 30], [httpUrl, 'site', 24], [note, 'note', 20]] as const) {
      const validate = validatorFor(schema);
      let atBound = 0;
      for (let seed = 1; seed <= 8; seed++) {
        const reply = await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Fill it in.' }], max_tokens: 80, temperature: 1, seed, response_format: { type: 'json_schema', json_schema: { name: 's', schema } } }, { id: `guard-${key}-${seed}` });
        const choice = reply.choices[0]!;
        if (choice.finish_reason !== 'stop') continue;
        const value = JSON.parse(choice.message.content!) as Record<string, string>;
        expect(validate(value), `${choice.message.content} ${JSON.stringify(validate.errors)}`).toBe(true);
        expect([...value[key]!].length).toBeLessThanOrEqual(max);
        if ([...value[key]!].length >= max - 2) atBound++;
      }
      // A random model runs strings to their bound: the guard, not luck, ended them.
      expect(atBound, key).toBeGreaterThan(0);
    }
  }, 240_000);

  it("a tool whose argument is zod's .email().max(30): forced calls at temperature 1 validate, and reach the bound", async () => {
    const parameters = z.toJSONSchema(z.object({ email: z.email().max(30), note: z.string().max(16) })) as JsonSchema;
    const validate = validatorFor(parameters);
    let atBound = 0;
    let calls = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const reply = await engine.chat({ model: 'jev', messages: [{ role: 'user', content: 'Sign me up.' }], max_tokens: 90, temperature: 1, seed, tools: [{ type: 'function', function: { name: 'signup', parameters, strict: false } }], tool_choice: 'required', parallel_tool_calls: false }, { id: `guard-tool-${seed}` });
      const choice = reply.choices[0]!;
      if (choice.finish_reason !== 'tool_calls') continue;
      const args = JSON.parse(choice.message.tool_calls![0]!.function.arguments) as Record<string, string>;
      expect(validate(args), `${JSON.stringify(args)} ${JSON.stringify(validate.errors)}`).toBe(true);
      calls++;
      if ([...args['email']!].length >= 28 || [...(args['note'] ?? '')].length >= 14) atBound++;
    }
    expect(calls).toBeGreaterThan(2);
    expect(atBound).toBeGreaterThan(0);
  }, 240_000);
});
