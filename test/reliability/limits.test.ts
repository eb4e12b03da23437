// Every limit of docs/limits.md at its number and one past it, through the HTTP surface
// (client.fetch over the in-process engine): at the limit the contract lets the request through
// (it is served, or refused later for another reason, never for that field); one past, it gets
// the status, code and param the document gives. And the document's numbers are limits.ts's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { limits } from '../../src/contract/index.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED, REPO, TINY } from '../support/models.ts';

const DECISION_PATH = 'http://localhost/inference/jev/api/alpha/decisions';
const CHAT_PATH = 'http://localhost/v1/chat/completions';
const noul = { type: 'noul', instructions: 'Is it so?' };

type Answer = { status: number; error?: { code: string; param: string | null; message: string }; details?: unknown; body: any };

describe('limits', () => {
  let client: JevClient;
  const post = async (url: string, body: unknown): Promise<Answer> => {
    const res = await client.fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const json = await res.json();
    return { status: res.status, error: json.error, body: json };
  };
  const decision = (patch: Record<string, unknown>) => post(DECISION_PATH, { model: 'jev', state: 'The parcel is late.', questions: { q: noul }, ...patch });
  const chat = (patch: Record<string, unknown>) => post(CHAT_PATH, { model: 'jev', messages: [{ role: 'user', content: 'Hi.' }], max_tokens: 2, temperature: 0, ...patch });
  const question = (q: Record<string, unknown>) => decision({ questions: { q: { instructions: 'Which?', ...q } } });
  /** Refused, with this status, code and param. */
  const refused = (a: Answer, status: number, code: string, param: string | null) => expect({ status: a.status, code: a.error?.code, param: a.error?.param }).toEqual({ status, code, param });
  /** Let through by the contract (which refuses with 400): served, or refused by the engine for the context (422). */
  const passes = (a: Answer) => {
    if (a.status === 200) return;
    expect({ status: a.status, code: a.error?.code }, a.error?.message).toEqual({ status: 422, code: 'context_length_exceeded' });
  };

  beforeAll(async () => {
    ({ client } = await localClient(GENERATED, TINY));
  });

  it('docs/limits.md gives the numbers of src/contract/limits.ts, and names every one', () => {
    const doc = readFileSync(join(REPO, 'docs/limits.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| `(\w+)` \| ([\d,]+) \|/gm)].map((m) => [m[1]!, Number(m[2]!.replaceAll(',', ''))] as const);
    expect(Object.fromEntries(rows)).toEqual({ ...limits });
  });

  it('questions: 1..256', async () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`q${i}`, noul]));
    const at = await decision({ questions: many(limits.maxQuestions) });
    expect(at.status).toBe(200);
    expect(Object.keys(at.body.answers)).toHaveLength(256);
    refused(await decision({ questions: many(limits.maxQuestions + 1) }), 400, 'invalid_request', 'questions');
    refused(await decision({ questions: {} }), 400, 'invalid_request', 'questions');
  });

  it('options of a choice question: 2..255', async () => {
    const options = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, null]));
    passes(await question({ type: 'choice', criteria: options(limits.maxOptions) }));
    passes(await question({ type: 'choice', criteria: options(limits.minOptions) }));
    refused(await question({ type: 'choice', criteria: options(limits.maxOptions + 1) }), 400, 'invalid_request', 'questions.q.criteria');
    refused(await question({ type: 'choice', criteria: options(limits.minOptions - 1) }), 400, 'invalid_request', 'questions.q.criteria');
  });

  it('grade labels of a score question: 2..101', async () => {
    const grades = (n: number) => Array.from({ length: n }, (_, i) => `${i}`);
    passes(await question({ type: 'score', criteria: grades(limits.maxGrades) }));
    passes(await question({ type: 'score', criteria: grades(limits.minGrades) }));
    refused(await question({ type: 'score', criteria: grades(limits.maxGrades + 1) }), 400, 'invalid_request', 'questions.q.criteria');
    refused(await question({ type: 'score', criteria: grades(limits.minGrades - 1) }), 400, 'invalid_request', 'questions.q.criteria');
  });

  it('state: 1,000,000 characters, 64 levels of nesting', async () => {
    // Let through by the contract, then far past the context: the engine's 422.
    expect(await decision({ state: 'x'.repeat(limits.maxStateChars) })).toMatchObject({ status: 422, error: { code: 'context_length_exceeded', param: 'state' } });
    refused(await decision({ state: 'x'.repeat(limits.maxStateChars + 1) }), 400, 'invalid_request', 'state');
    const nest = (levels: number) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < levels; i++) v = { k: v };
      return v;
    };
    passes(await decision({ state: nest(limits.maxDepth) }));
    refused(await decision({ state: nest(limits.maxDepth + 1) }), 400, 'invalid_request', 'state');
  });

  it('keys: 1,024 characters (question key, option key, chat model)', async () => {
    const key = (n: number) => 'k'.repeat(n);
    expect((await decision({ questions: { [key(limits.maxKeyChars)]: noul } })).status).toBe(200);
    refused(await decision({ questions: { [key(limits.maxKeyChars + 1)]: noul } }), 400, 'invalid_request', 'questions');
    passes(await question({ type: 'choice', criteria: { [key(limits.maxKeyChars)]: null, b: null } }));
    refused(await question({ type: 'choice', criteria: { [key(limits.maxKeyChars + 1)]: null, b: null } }), 400, 'invalid_request', 'questions.q.criteria');
    // A model id of 1,024 characters passes the contract, and is then not found.
    refused(await chat({ model: key(limits.maxKeyChars) }), 404, 'model_not_found', 'model');
    refused(await chat({ model: key(limits.maxKeyChars + 1) }), 400, 'invalid_request', 'model');
  });

  it('texts: 100,000 characters (instruction, description, grade label, stop sequence)', async () => {
    const text = (n: number) => 'word '.repeat(n / 5 + 1).slice(0, n);
    passes(await question({ type: 'noul', instructions: text(limits.maxTextChars) }));
    refused(await question({ type: 'noul', instructions: text(limits.maxTextChars + 1) }), 400, 'invalid_request', 'questions.q.instructions');
    passes(await question({ type: 'choice', criteria: { a: text(limits.maxTextChars), b: null } }));
    refused(await question({ type: 'choice', criteria: { a: text(limits.maxTextChars + 1), b: null } }), 400, 'invalid_request', 'questions.q.criteria.a');
    passes(await question({ type: 'score', criteria: ['low', text(limits.maxTextChars)] }));
    refused(await question({ type: 'score', criteria: ['low', text(limits.maxTextChars + 1)] }), 400, 'invalid_request', 'questions.q.criteria[1]');
    expect((await chat({ stop: [text(limits.maxTextChars)] })).status).toBe(200);
    refused(await chat({ stop: ['ok', text(limits.maxTextChars + 1)] }), 400, 'invalid_request', 'stop[1]');
  });

  it('messages: 1..10,000, each up to 1,000,000 characters', async () => {
    const messages = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }));
    const atMost = await chat({ messages: messages(limits.maxMessages) });
    expect(atMost).toMatchObject({ status: 422, error: { code: 'context_length_exceeded', param: 'messages' } });
    // …and with drop_oldest the same 10,000 messages are served, keeping the last turns.
    const dropped = await chat({ messages: messages(limits.maxMessages - 1), truncation: 'drop_oldest' });
    expect(dropped.status).toBe(200);
    refused(await chat({ messages: messages(limits.maxMessages + 1) }), 400, 'invalid_request', 'messages');
    refused(await chat({ messages: [] }), 400, 'invalid_request', 'messages');
    const long = await chat({ messages: [{ role: 'user', content: 'x'.repeat(limits.maxMessageChars) }] });
    expect(long).toMatchObject({ status: 422, error: { code: 'context_length_exceeded', param: 'messages[0].content' } });
    refused(await chat({ messages: [{ role: 'user', content: 'x'.repeat(limits.maxMessageChars + 1) }] }), 400, 'invalid_request', 'messages[0].content');
  });

  it('stop sequences: 4; top_logprobs: 20', async () => {
    expect((await chat({ stop: ['a', 'b', 'c', 'd'] })).status).toBe(200);
    refused(await chat({ stop: ['a', 'b', 'c', 'd', 'e'] }), 400, 'invalid_request', 'stop');
    const top = await chat({ logprobs: true, top_logprobs: limits.maxTopLogprobs });
    expect(top.status).toBe(200);
    expect(top.body.choices[0].logprobs.content[0].top_logprobs).toHaveLength(20);
    refused(await chat({ logprobs: true, top_logprobs: limits.maxTopLogprobs + 1 }), 400, 'invalid_request', 'top_logprobs');
  });

  it('tools: 128; a response schema\'s integer range: any size (digit-level grammar); a pattern\'s quantifier: 256', async () => {
    const tools = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    passes(await chat({ tools: tools(limits.maxTools) }));
    refused(await chat({ tools: tools(limits.maxTools + 1) }), 400, 'invalid_request', 'tools');
    const schema = (s: unknown) => ({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: s } } });
    // zod's plain .int(): the whole safe-integer range, enforced digit by digit (no longer written out as an enum).
    passes(await chat(schema({ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 })));
    refused(await chat(schema({ type: 'integer', minimum: 5, maximum: 1 })), 400, 'invalid_request', 'response_format.json_schema.schema');
    passes(await chat(schema({ type: 'string', pattern: `^a{${limits.maxPatternRepeat}}$` })));
    refused(await chat(schema({ type: 'string', pattern: `^a{${limits.maxPatternRepeat + 1}}$` })), 400, 'invalid_request', 'response_format.json_schema.schema.pattern');
  });

  it('body: 32 MiB exactly reaches the contract; one byte more is 413 before it', async () => {
    const body = (bytes: number) => {
      const head = '{"model":"jev","state":"';
      const tail = '","questions":{"q":{"type":"noul"}}}';
      return head + 'x'.repeat(bytes - head.length - tail.length) + tail;
    };
    expect(Buffer.byteLength(body(limits.maxBodyBytes))).toBe(limits.maxBodyBytes);
    refused(await post(DECISION_PATH, body(limits.maxBodyBytes)), 400, 'invalid_request', 'state'); // read, parsed, then too long a state
    refused(await post(DECISION_PATH, body(limits.maxBodyBytes + 1)), 413, 'payload_too_large', null);
  });

  it('context: a chat whose prompt plus max_tokens is exactly the context is served; one token more is 422 with the counts', async () => {
    const messages = [{ role: 'user', content: 'Count the stars.' }];
    const first = await chat({ messages, max_tokens: 1 });
    const prompt = first.body.usage.prompt_tokens as number;
    const context = 1024; // tiny-random-llama's max_position_embeddings
    const at = await chat({ messages, max_tokens: context - prompt, stop: [] });
    expect(at.status).toBe(200);
    expect(at.body.usage.prompt_tokens + at.body.usage.completion_tokens).toBeLessThanOrEqual(context);
    const past = await chat({ messages, max_tokens: context - prompt + 1 });
    refused(past, 422, 'context_length_exceeded', 'messages');
    expect(past.error?.message).toContain(`${prompt} tokens and ${context - prompt + 1} more are reserved`);
  });

  it('context: the largest state a decision serves, and one word more is 422 with the counts', async () => {
    const state = (words: number) => 'word '.repeat(words);
    let lo = 1;
    let hi = 2000;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if ((await decision({ state: state(mid) })).status === 200) lo = mid;
      else hi = mid;
    }
    expect((await decision({ state: state(lo) })).status).toBe(200);
    const past = await decision({ state: state(hi) });
    refused(past, 422, 'context_length_exceeded', 'state');
    expect(past.error?.message).toMatch(/in all; the model's context holds 1024/);
  });
});
