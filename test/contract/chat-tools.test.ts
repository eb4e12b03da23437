/**
 * tools, tool_choice and parallel_tool_calls in the chat request, and the tool messages of a
 * conversation: normalized exactly, refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import { limits, NO_PARAMETERS, parseChatRequest } from '../../src/contract/index.ts';
import { expectJevError } from './helpers.ts';

const base = { model: 'jev', messages: [{ role: 'user', content: 'Weather in Paris?' }] };
const parse = (extra: Record<string, unknown>) => parseChatRequest({ ...base, ...extra });
const weather = { type: 'function', function: { name: 'get_weather', description: 'Current weather.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true } };
const time = { type: 'function', function: { name: 'get-time' } };

describe('tools', () => {
  it('defaults: no tools, tool_choice "none", parallel_tool_calls true', () => {
    const r = parse({});
    expect({ tools: r.tools, tool_choice: r.tool_choice, parallel_tool_calls: r.parallel_tool_calls }).toEqual({ tools: [], tool_choice: 'none', parallel_tool_calls: true });
    expect(parse({ tools: null, tool_choice: null, parallel_tool_calls: null }).tool_choice).toBe('none');
    expect(parse({ tools: [] }).tools).toEqual([]);
  });

  it('normalizes tools exactly; tool_choice defaults to "auto" with tools', () => {
    const r = parse({ tools: [weather, time], parallel_tool_calls: false });
    expect(r.tools).toEqual([
      weather,
      { type: 'function', function: { name: 'get-time', parameters: NO_PARAMETERS, strict: false } },
    ]);
    expect(r.tool_choice).toBe('auto');
    expect(r.parallel_tool_calls).toBe(false);
    for (const choice of ['none', 'auto', 'required'] as const) expect(parse({ tools: [weather], tool_choice: choice }).tool_choice).toBe(choice);
    const named = { type: 'function', function: { name: 'get-time' } };
    expect(parse({ tools: [weather, time], tool_choice: named }).tool_choice).toEqual(named);
    expect(parse({ tool_choice: 'none' }).tool_choice).toBe('none');
    expect(parse({ tool_choice: 'auto' }).tool_choice).toBe('auto');
  });

  it('refuses malformed tools naming the field', () => {
    expectJevError(() => parse({ tools: {} }), 'invalid_request', 400, 'tools');
    expectJevError(() => parse({ tools: [5] }), 'invalid_request', 400, 'tools[0]');
    expectJevError(() => parse({ tools: [{ function: { name: 'a' } }] }), 'invalid_request', 400, 'tools[0].type');
    expectJevError(() => parse({ tools: [{ type: 'code_interpreter' }] }), 'invalid_request', 400, 'tools[0].type');
    expectJevError(() => parse({ tools: [{ type: 'function' }] }), 'invalid_request', 400, 'tools[0].function');
    expectJevError(() => parse({ tools: [{ type: 'function', function: {} }] }), 'invalid_request', 400, 'tools[0].function.name');
    expectJevError(() => parse({ tools: [{ type: 'function', function: { name: 'a b' } }] }), 'invalid_request', 400, 'tools[0].function.name');
    const err = expectJevError(() => parse({ tools: [weather, time, weather] }), 'invalid_request', 400, 'tools[2].function.name');
    expect(err.message).toMatch(/unique/);
    expectJevError(() => parse({ tools: [{ type: 'function', function: { name: 'a', description: 1 } }] }), 'invalid_request', 400, 'tools[0].function.description');
    expectJevError(() => parse({ tools: [{ type: 'function', function: { name: 'a', strict: 1 } }] }), 'invalid_request', 400, 'tools[0].function.strict');
    const many = Array.from({ length: limits.maxTools + 1 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } }));
    expectJevError(() => parse({ tools: many }), 'invalid_request', 400, 'tools');
    expect(parse({ tools: many.slice(0, limits.maxTools) }).tools).toHaveLength(limits.maxTools);
  });

  it("checks a tool's parameters with the response schema's subset, naming the keyword", () => {
    const tool = (parameters: unknown) => ({ tools: [time, { type: 'function', function: { name: 'f', parameters } }] });
    expectJevError(() => parse(tool({ type: 'object', properties: { n: { type: 'number', multipleOf: -0.5 } } })), 'invalid_request', 400, 'tools[1].function.parameters.properties.n.multipleOf');
    expectJevError(() => parse(tool({ type: 'object', properties: { n: { not: { type: 'string' } } } })), 'invalid_request', 400, 'tools[1].function.parameters.properties.n.not');
    expectJevError(() => parse(tool({ type: 'object', properties: { n: { oneOf: [] } } })), 'invalid_request', 400, 'tools[1].function.parameters.properties.n.oneOf');
    expectJevError(() => parse(tool('object')), 'invalid_request', 400, 'tools[1].function.parameters');
  });

  it('refuses a tool_choice that does not fit the tools', () => {
    expectJevError(() => parse({ tool_choice: 'required' }), 'invalid_request', 400, 'tool_choice');
    expectJevError(() => parse({ tool_choice: { type: 'function', function: { name: 'get_weather' } } }), 'invalid_request', 400, 'tool_choice');
    const err = expectJevError(() => parse({ tools: [weather], tool_choice: { type: 'function', function: { name: 'get-time' } } }), 'invalid_request', 400, 'tool_choice.function.name');
    expect(err.message).toMatch(/"get_weather"/);
    expectJevError(() => parse({ tools: [weather], tool_choice: 'any' }), 'invalid_request', 400, 'tool_choice');
    expectJevError(() => parse({ tools: [weather], tool_choice: 3 }), 'invalid_request', 400, 'tool_choice');
    expectJevError(() => parse({ tools: [weather], tool_choice: { type: 'tool' } }), 'invalid_request', 400, 'tool_choice.type');
    expectJevError(() => parse({ tools: [weather], tool_choice: { type: 'function' } }), 'invalid_request', 400, 'tool_choice.function');
    expectJevError(() => parse({ tools: [weather], tool_choice: { type: 'function', function: {} } }), 'invalid_request', 400, 'tool_choice.function.name');
    expectJevError(() => parse({ parallel_tool_calls: 'yes' }), 'invalid_request', 400, 'parallel_tool_calls');
  });
});

describe('tool messages', () => {
  const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

  it('an assistant message with tool_calls (content null, absent or text) and a tool message', () => {
    const messages = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
      { role: 'assistant', tool_calls: [call] },
      { role: 'assistant', content: 'Let me look.', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
    ];
    expect(parse({ tools: [weather], messages }).messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: '', tool_calls: [call] },
      { role: 'tool', content: '{"temp":21}', tool_call_id: 'call_1' },
      { role: 'assistant', content: '', tool_calls: [call] },
      { role: 'assistant', content: 'Let me look.', tool_calls: [call] },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
    ]);
    // An assistant message without tool calls keeps needing content; tool_calls: [] is none.
    expect(parse({ messages: [{ role: 'assistant', content: 'x', tool_calls: [] }] }).messages).toEqual([{ role: 'assistant', content: 'x' }]);
  });

  it('refuses malformed tool messages naming the field', () => {
    const m = (msg: unknown) => parse({ messages: [{ role: 'user', content: 'x' }, msg] });
    expectJevError(() => m({ role: 'assistant', content: null }), 'invalid_request', 400, 'messages[1].content');
    expectJevError(() => m({ role: 'assistant', content: 3, tool_calls: [call] }), 'invalid_request', 400, 'messages[1].content');
    expectJevError(() => m({ role: 'tool', content: 'r' }), 'invalid_request', 400, 'messages[1].tool_call_id');
    expectJevError(() => m({ role: 'tool', tool_call_id: 'c' }), 'invalid_request', 400, 'messages[1].content');
    expectJevError(() => m({ role: 'user', content: 'x', tool_calls: [call] }), 'invalid_request', 400, 'messages[1].tool_calls');
    expectJevError(() => m({ role: 'assistant', tool_calls: [{ ...call, id: '' }] }), 'invalid_request', 400, 'messages[1].tool_calls[0].id');
    expectJevError(() => m({ role: 'assistant', tool_calls: [{ ...call, type: 'code' }] }), 'invalid_request', 400, 'messages[1].tool_calls[0].type');
    expectJevError(() => m({ role: 'assistant', tool_calls: [{ ...call, function: { name: 'f', arguments: { city: 'x' } } }] }), 'invalid_request', 400, 'messages[1].tool_calls[0].function.arguments');
  });
});
