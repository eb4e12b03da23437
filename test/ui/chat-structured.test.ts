import { describe, expect, it } from 'vitest';
import { placeChatError } from '../../src/ui/chat/chat-errors.ts';
import { chatRequest, requestMessages } from '../../src/ui/chat/chat-request.ts';
import { DEFAULT_SETTINGS, type ChatEntry } from '../../src/ui/chat/chat-store.ts';
import type { ErrorInfo } from '../../src/ui/state/error-info.ts';
import { SCHEMA_EXAMPLES, schemaText } from '../../src/ui/chat/schema-examples.ts';
import { DEFAULT_STRUCTURED, errorsStillApplying, isStructuredDraft, structuredFields, structuredProblems, type StructuredDraft } from '../../src/ui/chat/structured-draft.ts';
import { addToolCallDeltas, toolCallsOf } from '../../src/ui/chat/tool-calls.ts';
import { pendingCalls, resultEntries } from '../../src/ui/chat/tool-results.ts';

const refused = (param: string): ErrorInfo => ({ message: `'${param}' is refused.`, param, code: 'invalid_request', status: 400, reason: null });

const weather: StructuredDraft = {
  ...DEFAULT_STRUCTURED,
  format: 'json_schema',
  schemaName: 'contact_card',
  schema: schemaText(SCHEMA_EXAMPLES[0]!.schema),
  tools: [
    { id: 't1', name: 'get_weather', description: 'Weather', parameters: '{"type":"object"}' },
    { id: 't2', name: 'get_time', description: '', parameters: '' },
  ],
  toolChoice: 'function:get_time',
  parallelToolCalls: false,
};

describe("the chat's tool calls, streamed", () => {
  it('folds delta.tool_calls by index: id and name set, arguments concatenated, order kept', () => {
    let slots = addToolCallDeltas([], [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }]);
    slots = addToolCallDeltas(slots, [{ index: 0, function: { arguments: '{"city":"Pa' } }]);
    slots = addToolCallDeltas(slots, [{ index: 1, id: 'call_b', function: { name: 'get_time', arguments: '{}' } }, { index: 0, function: { arguments: 'ris"}' } }]);
    expect(toolCallsOf(slots)).toEqual([
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
  });

  it('leaves the slots it was given untouched and keeps a skipped index empty', () => {
    const before = addToolCallDeltas([], [{ index: 0, id: 'a', function: { name: 'f', arguments: '{' } }]);
    const after = addToolCallDeltas(before, [{ index: 2, id: 'c', function: { name: 'g', arguments: '' } }, { index: 0, function: { arguments: '}' } }]);
    expect(before[0]!.function.arguments).toBe('{');
    expect(after).toHaveLength(3);
    expect(toolCallsOf(after).map((c) => c.id)).toEqual(['a', 'c']);
  });
});

describe('the structured settings, as sent', () => {
  it('sends response_format, tools, tool_choice and parallel_tool_calls as OpenAI names them', () => {
    expect(structuredProblems(weather)).toEqual({});
    expect(structuredFields(weather)).toEqual({
      response_format: { type: 'json_schema', json_schema: { name: 'contact_card', schema: SCHEMA_EXAMPLES[0]!.schema } },
      tools: [
        { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      parallel_tool_calls: false,
    });
    expect(structuredFields(DEFAULT_STRUCTURED)).toEqual({});
    expect(structuredFields({ ...DEFAULT_STRUCTURED, format: 'json_object' })).toEqual({ response_format: { type: 'json_object' } });
  });

  it('finds what the page can see itself: a schema that is not JSON or not an object, bad or repeated names, a stale tool choice', () => {
    const bad: StructuredDraft = {
      ...weather,
      schemaName: 'a b',
      schema: '{"type": ',
      tools: [
        { id: 't1', name: 'f', description: '', parameters: '[1]' },
        { id: 't2', name: 'f', description: '', parameters: '' },
      ],
      toolChoice: 'function:gone',
    };
    const p = structuredProblems(bad);
    expect(p.schemaName).toMatch(/letters, digits/);
    expect(p.schema).toMatch(/^Not valid JSON/);
    expect(p.tool?.['t1']?.parameters).toMatch(/is an object/);
    expect(p.tool?.['t2']?.name).toMatch(/already named "f"/);
    expect(p.toolChoice).toMatch(/"gone"/);
  });

  it('drops an error once its field is edited, and only that one', () => {
    const errors = { schema: 'multipleOf', toolChoice: 'no', tool: { t1: { parameters: 'bad', name: 'taken' }, t2: { other: 'x' } } };
    expect(errorsStillApplying(errors, weather, weather)).toMatchObject(errors);
    const edited = { ...weather, schema: weather.schema + ' ', tools: [{ ...weather.tools[0]!, parameters: '{}' }, weather.tools[1]!] };
    const left = errorsStillApplying(errors, weather, edited);
    expect(left.schema).toBeUndefined();
    expect(left.toolChoice).toBe('no');
    expect(left.tool).toEqual({ t1: { name: 'taken' }, t2: { other: 'x' } });
  });

  it('keeps only a well-formed stored draft', () => {
    expect(isStructuredDraft(weather)).toBe(true);
    expect(isStructuredDraft({ ...weather, format: 'yaml' })).toBe(false);
    expect(isStructuredDraft({ ...weather, toolChoice: 'sometimes' })).toBe(false);
    expect(isStructuredDraft({ ...weather, tools: [{ id: 1 }] })).toBe(false);
  });
});

describe('the conversation, with tool calls and results', () => {
  const calls = [{ id: 'call_a', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }];
  const history: ChatEntry[] = [
    { id: 'u1', role: 'user', content: 'Weather?' },
    { id: 'a1', role: 'assistant', content: '', state: 'done', toolCalls: calls, toolResults: { call_a: '{"t":21}' } },
  ];

  it('waits for the results of the last reply, then sends them as tool messages after the calls', () => {
    const pending = pendingCalls(history);
    expect(pending?.entry.id).toBe('a1');
    const results = resultEntries(pending!, (i) => `r${i}`);
    expect(results).toEqual([{ key: 'call_a', content: '{"t":21}', entry: { id: 'r0', role: 'tool', content: '{"t":21}', toolCallId: 'call_a', toolName: 'get_weather' } }]);
    const body = chatRequest(DEFAULT_SETTINGS, [...history, results[0]!.entry], weather);
    expect((body['messages'] as unknown[]).slice(1)).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_a', content: '{"t":21}' },
    ]);
    expect(pendingCalls([...history, results[0]!.entry])).toBe(null);
  });

  it('sends a stopped reply with calls as its text only', () => {
    const stopped: ChatEntry[] = [history[0]!, { ...history[1]!, state: 'stopped', content: 'Let me' }];
    expect(requestMessages(DEFAULT_SETTINGS, stopped).map((m) => m.message)[2]).toEqual({ role: 'assistant', content: 'Let me' });
    expect(pendingCalls(stopped)).toBe(null);
  });

  it("places the engine's refusals beside their field", () => {
    const results = resultEntries(pendingCalls(history)!, () => 'r0');
    const all = [...history, results[0]!.entry];
    const sent = { messages: requestMessages(DEFAULT_SETTINGS, all), history: all, tools: weather.tools };
    expect(placeChatError(refused('response_format.json_schema.schema.properties.age.multipleOf'), sent).structured.schema).toMatch(/multipleOf/);
    expect(placeChatError(refused('response_format.json_schema.name'), sent).structured.schemaName).toBeDefined();
    expect(placeChatError(refused('response_format.type'), sent).structured.format).toBeDefined();
    expect(placeChatError(refused('tools[1].function.parameters.properties.x.not'), sent).structured.tool).toEqual({ t2: { parameters: expect.any(String) } });
    expect(placeChatError(refused('tools[0].function.name'), sent).structured.tool).toEqual({ t1: { name: expect.any(String) } });
    expect(placeChatError(refused('tools[0].type'), sent).structured.tool).toEqual({ t1: { other: expect.any(String) } });
    expect(placeChatError(refused('tool_choice.function.name'), sent).structured.toolChoice).toBeDefined();
    expect(placeChatError(refused('parallel_tool_calls'), sent).structured.parallelToolCalls).toBeDefined();
    expect(placeChatError(refused('messages[0].content'), sent).settings.system).toBeDefined();
    expect(placeChatError(refused('messages[3].content'), sent).toolResults).toEqual({ call_a: expect.any(String) });
    expect(placeChatError(refused('messages[1].content'), sent).composer).toBeDefined();
    expect(placeChatError(refused('temperature'), sent).settings.temperature).toBeDefined();
  });
});
