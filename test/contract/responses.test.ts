import { describe, expect, it } from 'vitest';
import {
  answerSchema, chatCompletionChunkSchema, chatCompletionSchema, decisionResponseSchema, modelListSchema, usageSchema,
} from '../../src/contract/index.ts';
import type { ChatCompletion, ChatCompletionChunk, DecisionResponse, ModelList } from '../../src/contract/index.ts';

const response: DecisionResponse = {
  id: 'dec_abc123',
  model: 'local/jev-smollm2-135m-20261101',
  provider: 'local',
  answers: {
    angry: { type: 'noul', noul: 0.93 },
    team: { type: 'choice', choice: 'billing', probabilities: { billing: 0.7, tech: 0.2, other: 0.1 }, confidence: 0.41 },
    mood: {
      type: 'score', score: 1.3, legend: { '0': 'calm', '1': 'annoyed', '2': 'furious' },
      probabilities: { '0': 0.2, '1': 0.3, '2': 0.5 }, confidence: 0.2,
    },
  },
  usage: { input_tokens: 120, output_tokens: 3, cost: 0 },
};

describe('decisionResponseSchema', () => {
  it('accepts a valid response', () => {
    expect(decisionResponseSchema.parse(response)).toEqual(response);
  });
  it('checks the specification ranges', () => {
    expect(answerSchema.safeParse({ type: 'noul', noul: 1.2 }).success).toBe(false);
    expect(answerSchema.safeParse({ type: 'noul', noul: -0.1 }).success).toBe(false);
    expect(answerSchema.safeParse({ type: 'noul', noul: NaN }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['team'], confidence: 1.5 }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['team'], choice: 'nope' }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['team'], probabilities: { billing: 0.5, tech: 0.1 } }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['team'], probabilities: { billing: 1.2, tech: -0.2 } }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['mood'], score: 2.5 }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['mood'], score: -1 }).success).toBe(false);
    expect(answerSchema.safeParse({ ...response.answers['mood'], probabilities: { '0': 0.5, '7': 0.5 } }).success).toBe(false);
    expect(answerSchema.safeParse({ type: 'maybe' }).success).toBe(false);
    expect(usageSchema.safeParse({ input_tokens: 1.5, output_tokens: 0, cost: 0 }).success).toBe(false);
    expect(usageSchema.safeParse({ input_tokens: -1, output_tokens: 0, cost: 0 }).success).toBe(false);
  });
});

describe('chat response schemas', () => {
  it('accept a completion and chunks', () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-x1', object: 'chat.completion', created: 1_790_000_000, model: 'jev',
      choices: [{
        index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop',
        logprobs: { content: [{ token: 'Hello', logprob: -0.1, bytes: [72, 101, 108, 108, 111], top_logprobs: [{ token: 'Hello', logprob: -0.1, bytes: null }] }] },
      }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    };
    expect(chatCompletionSchema.parse(completion)).toEqual(completion);
    const first: ChatCompletionChunk = {
      id: 'chatcmpl-x1', object: 'chat.completion.chunk', created: 1_790_000_000, model: 'jev',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }],
    };
    const last: ChatCompletionChunk = { ...first, choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } };
    expect(chatCompletionChunkSchema.parse(first)).toEqual(first);
    expect(chatCompletionChunkSchema.parse(last)).toEqual(last);
    expect(chatCompletionSchema.safeParse({ ...completion, id: 'x' }).success).toBe(false);
    expect(chatCompletionSchema.safeParse({ ...completion, usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 7 } }).success).toBe(false);
  });

  it('accept tool calls: a message with content null and finish_reason "tool_calls", and tool-call deltas', () => {
    const call = { id: 'call_1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
    const completion: ChatCompletion = {
      id: 'chatcmpl-t1', object: 'chat.completion', created: 1_790_000_000, model: 'jev',
      choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls', logprobs: null }],
      usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 },
    };
    expect(chatCompletionSchema.parse(completion)).toEqual(completion);
    const choice = completion.choices[0]!;
    const withChoice = (c: object) => ({ ...completion, choices: [{ ...choice, ...c }] });
    // content null needs tool calls; tool calls and finish_reason "tool_calls" go together.
    expect(chatCompletionSchema.safeParse(withChoice({ message: { role: 'assistant', content: null } })).success).toBe(false);
    expect(chatCompletionSchema.safeParse(withChoice({ finish_reason: 'stop' })).success).toBe(false);
    expect(chatCompletionSchema.safeParse(withChoice({ message: { role: 'assistant', content: 'x' } })).success).toBe(false);
    expect(chatCompletionSchema.safeParse(withChoice({ message: { role: 'assistant', content: null, tool_calls: [{ ...call, function: { name: 'f', arguments: {} } }] } })).success).toBe(false);
    const chunk = (delta: object): ChatCompletionChunk => ({
      id: 'chatcmpl-t1', object: 'chat.completion.chunk', created: 1_790_000_000, model: 'jev',
      choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
    });
    const opening = chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] });
    const piece = chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] });
    expect(chatCompletionChunkSchema.parse(opening)).toEqual(opening);
    expect(chatCompletionChunkSchema.parse(piece)).toEqual(piece);
    expect(chatCompletionChunkSchema.parse(chunk({}))).toEqual(chunk({}));
    expect(chatCompletionChunkSchema.safeParse(chunk({ tool_calls: [{ index: -1 }] })).success).toBe(false);
    expect(chatCompletionChunkSchema.safeParse(chunk({ tool_calls: [{ index: 0, type: 'code' }] })).success).toBe(false);
    const end = { ...chunk({}), choices: [{ index: 0 as const, delta: {}, finish_reason: 'tool_calls' as const, logprobs: null }] };
    expect(chatCompletionChunkSchema.parse(end)).toEqual(end);
  });
});

describe('modelListSchema', () => {
  it('accepts the model list', () => {
    const list: ModelList = { object: 'list', data: [{ id: 'jev', object: 'model', created: 0, owned_by: 'local' }] };
    expect(modelListSchema.parse(list)).toEqual(list);
    expect(modelListSchema.safeParse({ object: 'list', data: [{ id: 'jev' }] }).success).toBe(false);
  });
});
