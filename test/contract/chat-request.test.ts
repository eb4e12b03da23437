import { describe, expect, it } from 'vitest';
import { enableThinkingFor, limits, parseChatRequest } from '../../src/contract/index.ts';
import type { ChatRequest } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const valid = { model: 'jev', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] };
const defaults: ChatRequest = {
  model: 'jev',
  messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }],
  temperature: 1,
  top_p: 1,
  max_tokens: null,
  stream: false,
  stop: [],
  seed: null,
  n: 1,
  logprobs: false,
  top_logprobs: 0,
  include_usage: false,
  truncation: 'error',
  reasoning_effort: null,
  response_format: { type: 'text' },
  tools: [],
  tool_choice: 'none',
  parallel_tool_calls: true,
};
const parse = (extra: Record<string, unknown>) => parseChatRequest({ ...valid, ...extra });

describe('parseChatRequest', () => {
  it('fills the defaults exactly', () => {
    expect(parseChatRequest(valid)).toEqual(defaults);
  });

  it('reads every known field', () => {
    expect(
      parse({
        model: 'SmolLM2-135M-Instruct', temperature: 0, top_p: 0.5, max_tokens: 16, stream: true, stop: ['\n\n', 'END'],
        seed: -7, n: 1, logprobs: true, top_logprobs: 5, stream_options: { include_usage: true }, truncation: 'drop_oldest',
        reasoning_effort: 'low',
      }),
    ).toEqual({
      ...defaults, model: 'SmolLM2-135M-Instruct', temperature: 0, top_p: 0.5, max_tokens: 16, stream: true, stop: ['\n\n', 'END'],
      seed: -7, logprobs: true, top_logprobs: 5, include_usage: true, truncation: 'drop_oldest',
      reasoning_effort: 'low',
    });
  });

  it('treats null as the default for every optional field', () => {
    const nulls = Object.fromEntries(
      ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stream', 'stream_options', 'stop', 'seed', 'n', 'logprobs', 'top_logprobs', 'truncation', 'reasoning_effort'].map((k) => [k, null]),
    );
    expect(parse(nulls)).toEqual(defaults);
  });

  it('reads reasoning_effort, and refuses an unknown effort naming the field', () => {
    for (const effort of ['none', 'minimal', 'low', 'medium', 'high']) expect(parse({ reasoning_effort: effort }).reasoning_effort).toBe(effort);
    expectJevError(() => parse({ reasoning_effort: 'extreme' }), 'invalid_request', 400, 'reasoning_effort');
    expectJevError(() => parse({ reasoning_effort: true }), 'invalid_request', 400, 'reasoning_effort');
  });

  it('maps reasoning_effort to enable_thinking: none/minimal off, low/medium/high on, omitted the template default', () => {
    expect(['none', 'minimal', 'low', 'medium', 'high'].map((e) => enableThinkingFor(e as never))).toEqual([false, false, true, true, true]);
    expect(enableThinkingFor(null)).toBeUndefined();
  });

  it('ignores unknown fields', () => {
    expect(parse({ frequency_penalty: 1, presence_penalty: 1, user: 'u', tools: [], response_format: { type: 'text' } })).toEqual(defaults);
  });

  it('refuses a body that is not an object, with param null', () => {
    for (const body of [null, 'x', 3, [valid]]) expectJevError(() => parseChatRequest(body), 'invalid_request', 400, null);
  });

  it('tells a decision body that this is the chat endpoint', () => {
    const err = expectJevError(
      () => parseChatRequest({ model: 'jev', state: 'x', questions: { q: { type: 'noul' } } }),
      'invalid_request', 400, 'questions',
    );
    expect(err.message).toMatch(/chat completion endpoint/);
    expect(err.message).toMatch(/not a decision request/);
    expectJevError(() => parseChatRequest({ model: 'jev', state: 'x' }), 'invalid_request', 400, 'state');
  });

  it('model: a required non-empty string', () => {
    const { model: _, ...noModel } = valid;
    expectJevError(() => parseChatRequest(noModel), 'invalid_request', 400, 'model');
    expectJevError(() => parse({ model: '' }), 'invalid_request', 400, 'model');
    expectJevError(() => parse({ model: 5 }), 'invalid_request', 400, 'model');
  });
});

describe('parseChatRequest: messages', () => {
  it('is a required non-empty array', () => {
    expectJevError(() => parseChatRequest({ model: 'jev' }), 'invalid_request', 400, 'messages');
    expectJevError(() => parse({ messages: [] }), 'invalid_request', 400, 'messages');
    expectJevError(() => parse({ messages: 'hi' }), 'invalid_request', 400, 'messages');
    expectJevError(() => parse({ messages: { role: 'user', content: 'x' } }), 'invalid_request', 400, 'messages');
    expectJevError(() => parse({ messages: [5] }), 'invalid_request', 400, 'messages[0]');
  });

  it('roles: system, user, assistant, tool; developer is read as system', () => {
    expect(parse({ messages: [{ role: 'developer', content: 'd' }, { role: 'assistant', content: 'a' }] }).messages).toEqual([
      { role: 'system', content: 'd' },
      { role: 'assistant', content: 'a' },
    ]);
    const bad = [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'function', content: 'c' }];
    const err = expectJevError(() => parse({ messages: bad }), 'invalid_request', 400, 'messages[2].role');
    expect(err.message).toMatch(/"system", "user", "assistant", "tool"/);
    expectJevError(() => parse({ messages: [{ content: 'x' }] }), 'invalid_request', 400, 'messages[0].role');
  });

  it('content: a string or text parts joined with \\n', () => {
    expect(parse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }] }).messages).toEqual([
      { role: 'user', content: 'a\nb' },
    ]);
    expect(parse({ messages: [{ role: 'user', content: '' }] }).messages[0]?.content).toBe('');
    expectJevError(() => parse({ messages: [{ role: 'user' }] }), 'invalid_request', 400, 'messages[0].content');
    expectJevError(() => parse({ messages: [{ role: 'user', content: 5 }] }), 'invalid_request', 400, 'messages[0].content');
    expectJevError(
      () => parse({ messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'u' } }] }] }),
      'invalid_request', 400, 'messages[0].content[1].type',
    );
    expectJevError(() => parse({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }), 'invalid_request', 400, 'messages[0].content[0].text');
    expectJevError(() => parse({ messages: [{ role: 'user', content: ['a'] }] }), 'invalid_request', 400, 'messages[0].content[0]');
    const huge = 'x'.repeat(limits.maxMessageChars + 1);
    expectJevError(() => parse({ messages: [{ role: 'user', content: huge }] }), 'invalid_request', 400, 'messages[0].content');
  });
});

describe('parseChatRequest: sampling and limits', () => {
  it('temperature: a finite number in 0..2', () => {
    expect(parse({ temperature: 2 }).temperature).toBe(2);
    expect(parse({ temperature: 0 }).temperature).toBe(0);
    for (const temperature of [NaN, Infinity, -Infinity, 2.5, -0.1, '1', true]) {
      expectJevError(() => parse({ temperature }), 'invalid_request', 400, 'temperature');
    }
    expect(expectJevError(() => parse({ temperature: NaN }), 'invalid_request', 400, 'temperature').message).toMatch(/NaN/);
    expect(expectJevError(() => parse({ temperature: 2.5 }), 'invalid_request', 400, 'temperature').message).toMatch(/at most 2/);
  });

  it('top_p: in (0, 1]', () => {
    expect(parse({ top_p: 1 }).top_p).toBe(1);
    expect(parse({ top_p: 0.01 }).top_p).toBe(0.01);
    for (const top_p of [0, 1.1, -1, NaN]) expectJevError(() => parse({ top_p }), 'invalid_request', 400, 'top_p');
  });

  it('max_tokens: a positive integer; max_completion_tokens is its alias', () => {
    expect(parse({ max_tokens: 1 }).max_tokens).toBe(1);
    expect(parse({ max_completion_tokens: 32 }).max_tokens).toBe(32);
    expect(parse({ max_tokens: 32, max_completion_tokens: 32 }).max_tokens).toBe(32);
    expectJevError(() => parse({ max_tokens: 8, max_completion_tokens: 32 }), 'invalid_request', 400, 'max_completion_tokens');
    for (const max_tokens of [0, -1, 1.5, NaN, Infinity, '8']) expectJevError(() => parse({ max_tokens }), 'invalid_request', 400, 'max_tokens');
    expectJevError(() => parse({ max_completion_tokens: 0 }), 'invalid_request', 400, 'max_completion_tokens');
  });

  it('stop: a string or at most 4 strings', () => {
    expect(parse({ stop: 'END' }).stop).toEqual(['END']);
    expect(parse({ stop: ['a', 'b', 'c', 'd'] }).stop).toEqual(['a', 'b', 'c', 'd']);
    expect(parse({ stop: [] }).stop).toEqual([]);
    const err = expectJevError(() => parse({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'invalid_request', 400, 'stop');
    expect(err.message).toMatch(/at most 4 stop sequences, got 5/);
    expectJevError(() => parse({ stop: ['a', 5] }), 'invalid_request', 400, 'stop[1]');
    expectJevError(() => parse({ stop: ['a', ''] }), 'invalid_request', 400, 'stop[1]');
    expectJevError(() => parse({ stop: '' }), 'invalid_request', 400, 'stop');
    expectJevError(() => parse({ stop: 5 }), 'invalid_request', 400, 'stop');
  });

  it('seed: an integer', () => {
    expect(parse({ seed: 42 }).seed).toBe(42);
    for (const seed of [1.5, NaN, 1e20, 'x']) expectJevError(() => parse({ seed }), 'invalid_request', 400, 'seed');
  });

  it('n: only 1', () => {
    expect(parse({ n: 1 }).n).toBe(1);
    const err = expectJevError(() => parse({ n: 2 }), 'invalid_request', 400, 'n');
    expect(err.message).toMatch(/only one choice/);
    expectJevError(() => parse({ n: 0 }), 'invalid_request', 400, 'n');
    expectJevError(() => parse({ n: '1' }), 'invalid_request', 400, 'n');
  });

  it('top_logprobs: 0..20, and above 0 only with logprobs', () => {
    expect(parse({ logprobs: true, top_logprobs: 20 }).top_logprobs).toBe(20);
    expect(parse({ logprobs: true }).top_logprobs).toBe(0);
    expect(parse({ top_logprobs: 0 }).top_logprobs).toBe(0);
    expectJevError(() => parse({ top_logprobs: 3 }), 'invalid_request', 400, 'top_logprobs');
    expectJevError(() => parse({ logprobs: false, top_logprobs: 3 }), 'invalid_request', 400, 'top_logprobs');
    expectJevError(() => parse({ logprobs: true, top_logprobs: 21 }), 'invalid_request', 400, 'top_logprobs');
    expectJevError(() => parse({ logprobs: 'yes' }), 'invalid_request', 400, 'logprobs');
  });

  it('stream and stream_options.include_usage', () => {
    expect(parse({ stream: true, stream_options: { include_usage: true } })).toMatchObject({ stream: true, include_usage: true });
    expectJevError(() => parse({ stream: 'true' }), 'invalid_request', 400, 'stream');
    expectJevError(() => parse({ stream_options: { include_usage: 1 } }), 'invalid_request', 400, 'stream_options.include_usage');
    expectJevError(() => parse({ stream_options: true }), 'invalid_request', 400, 'stream_options');
  });

  it('truncation: error | drop_oldest (OpenAI names disabled | auto)', () => {
    expect(parse({ truncation: 'auto' }).truncation).toBe('drop_oldest');
    expect(parse({ truncation: 'disabled' }).truncation).toBe('error');
    expect(parse({ truncation: 'error' }).truncation).toBe('error');
    expectJevError(() => parse({ truncation: 'middle' }), 'invalid_request', 400, 'truncation');
  });
});
