import { expect, test, type Locator, type Page } from '@playwright/test';
import { installChatStub, refusal, scriptReplies, sentBodies, textReply, toolCallReply } from './support/chat-stub.ts';
import { MIRROR } from './support/env.ts';
import { EXAMPLE_TOOL, SCHEMA_EXAMPLES } from '../src/ui/chat/schema-examples.ts';

/**
 * The Chat tab's structured output and tools (issue 29 item 4), driven as a person would. The
 * page's own part (settings, what it sends, how it shows JSON and tool calls, persistence,
 * refusals placed beside their field) runs against scripted replies (support/chat-stub.ts) on the
 * generated tiny-random-llama; the engine's part runs on a random-weight Qwen2.5 at the end.
 */

/** The schemas the page's one-click examples load (the Sentiment example, the example tool's parameters): what it must show and send. */
const SENTIMENT = SCHEMA_EXAMPLES.find((e) => e.id === 'sentiment')!.schema;
const WEATHER = EXAMPLE_TOOL.parameters;

async function open(page: Page, model = 'tiny-random-llama', dtype = '') {
  await page.goto(`/?model=${model}&host=${encodeURIComponent(MIRROR)}&device=wasm${dtype ? `&dtype=${dtype}` : ''}#chat`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
}

/** Opens a settings section (a <details>) by its summary, if it is closed. */
async function openSection(page: Page, testId: 'format-settings' | 'tools-settings'): Promise<Locator> {
  const section = page.getByTestId(testId);
  if ((await section.getAttribute('open')) === null) await section.locator('summary').click();
  await expect(section).toHaveAttribute('open', '');
  return section;
}

function lastAssistant(page: Page): Locator {
  return page.getByTestId('message').and(page.locator('[data-role=assistant]')).last();
}

test.describe('structured output and tools in the playground (scripted replies)', () => {
  test.beforeEach(async ({ page }) => {
    await installChatStub(page);
  });

  test('a JSON schema and a tool set in the UI are sent, shown in the snippets, and survive a reload', async ({ page }) => {
    await open(page);
    const format = await openSection(page, 'format-settings');
    await format.getByLabel('Format').selectOption('json_schema');
    // A schema chosen with nothing typed starts from the first example.
    await expect(format.getByLabel('Schema name')).toHaveValue('contact_card');
    await format.getByRole('button', { name: 'Sentiment' }).click();
    await expect(format.getByLabel('Schema name')).toHaveValue('sentiment');
    expect(JSON.parse(await format.getByLabel('Schema', { exact: true }).inputValue())).toEqual(SENTIMENT);
    await expect(format.getByRole('status')).toContainText('Sentiment loaded.');

    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    const tool = tools.getByTestId('tool');
    await expect(tool.getByLabel('Function name')).toBeFocused();
    await expect(tool.getByLabel('Function name')).toHaveValue('get_weather');
    await tools.getByLabel('Tool choice').selectOption('function:get_weather');
    await tools.getByLabel('Parallel tool calls').uncheck();

    await scriptReplies(page, textReply(['{"label": ', '"positive", ', '"confidence": 87}']));
    await page.getByLabel('Message', { exact: true }).fill('I love this phone.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');

    const [body] = await sentBodies(page);
    expect(body!['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'sentiment', schema: SENTIMENT } });
    expect(body!['tools']).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'The current weather in a city', parameters: WEATHER } }]);
    expect(body!['tool_choice']).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(body!['parallel_tool_calls']).toBe(false);

    const json = lastAssistant(page).getByTestId('reply-json');
    await expect(json).toBeVisible();
    expect(JSON.parse((await json.textContent())!)).toEqual({ label: 'positive', confidence: 87 });
    await expect(json).toContainText('"confidence": 87');

    const snippets = page.locator('#chat-panel').getByTestId('snippets');
    await snippets.getByText('Use it from code').click();
    for (const kind of ['curl', 'fetch', 'openai client']) {
      await snippets.getByRole('button', { name: kind, exact: true }).click();
      const code = snippets.getByTestId('snippet-code');
      await expect(code).toContainText('"response_format"');
      await expect(code).toContainText('"name": "sentiment"');
      await expect(code).toContainText('"tools"');
      await expect(code).toContainText('"tool_choice"');
      await expect(code).toContainText('"parallel_tool_calls": false');
    }

    await page.getByLabel('Message', { exact: true }).fill('A draft, kept');
    await page.reload();
    await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
    const formatAgain = await openSection(page, 'format-settings');
    await expect(formatAgain.getByLabel('Format')).toHaveValue('json_schema');
    await expect(formatAgain.getByLabel('Schema name')).toHaveValue('sentiment');
    expect(JSON.parse(await formatAgain.getByLabel('Schema', { exact: true }).inputValue())).toEqual(SENTIMENT);
    const toolsAgain = await openSection(page, 'tools-settings');
    await expect(toolsAgain.getByTestId('tool').getByLabel('Function name')).toHaveValue('get_weather');
    await expect(toolsAgain.getByLabel('Tool choice')).toHaveValue('function:get_weather');
    await expect(toolsAgain.getByLabel('Parallel tool calls')).not.toBeChecked();
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('A draft, kept');
    expect(JSON.parse((await lastAssistant(page).getByTestId('reply-json').textContent())!)).toEqual({ label: 'positive', confidence: 87 });

    // Back to text: no structured field is sent any more; tools removed: none of theirs either.
    await formatAgain.getByLabel('Format').selectOption('text');
    await toolsAgain.getByRole('button', { name: 'Remove tool get_weather' }).click();
    await scriptReplies(page, textReply(['Fine.']));
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
    const [plain] = await sentBodies(page);
    for (const field of ['response_format', 'tools', 'tool_choice', 'parallel_tool_calls']) expect(plain).not.toHaveProperty(field);
  });

  test('the schema editor says what is wrong as it is typed; nothing is sent while a schema or a tool is invalid', async ({ page }) => {
    await open(page);
    const format = await openSection(page, 'format-settings');
    await format.getByLabel('Format').selectOption('json_schema');
    const schema = format.getByLabel('Schema', { exact: true });
    await schema.fill('{ "type": "object", "properties": { "age": ');
    const problem = format.getByTestId('schema-problem');
    await expect(problem).toContainText('Not valid JSON');
    await expect(schema).toHaveAttribute('aria-invalid', 'true');
    await expect(schema).toHaveAttribute('aria-describedby', /chat-schema-problem/);
    await schema.fill('[1, 2]');
    await expect(problem).toHaveText('A JSON schema is an object: { "type": …, … }.');

    await page.getByLabel('Message', { exact: true }).fill('Keep me');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('chat-status')).toHaveText('Not sent: fix the marked settings first.');
    expect(await sentBodies(page)).toHaveLength(0);
    await expect(page.getByTestId('message')).toHaveCount(0);
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('Keep me');

    // What was typed, invalid or not, survives a reload.
    await page.reload();
    await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
    const again = await openSection(page, 'format-settings');
    await expect(again.getByLabel('Schema', { exact: true })).toHaveValue('[1, 2]');
    await expect(again.getByTestId('schema-problem')).toBeVisible();

    await again.getByLabel('Schema', { exact: true }).fill(JSON.stringify(SENTIMENT, null, 2));
    await expect(again.getByTestId('schema-problem')).toHaveCount(0);
    await expect(again.getByLabel('Schema', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');
    await again.getByLabel('Schema name').fill('bad name!');

    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Add a tool' }).click();
    const tool = tools.getByTestId('tool');
    await tool.getByLabel('Parameters').fill('{ "type": ');
    await expect(tool.getByTestId('schema-problem')).toContainText('Not valid JSON');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(again.locator('#chat-schema-name-error')).toContainText('letters, digits');
    await expect(tool.getByTestId('field-error')).toHaveText('Give the tool a name.');
    expect(await sentBodies(page)).toHaveLength(0);
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('Keep me');
  });

  test('a refused schema keyword or tool shows its error beside that field and keeps what was typed', async ({ page }) => {
    await open(page);
    const format = await openSection(page, 'format-settings');
    await format.getByRole('button', { name: 'Contact card' }).click();
    const param = 'response_format.json_schema.schema.properties.age.multipleOf';
    const withMultiple = JSON.stringify({ type: 'object', properties: { age: { type: 'integer', multipleOf: 5 } } }, null, 2);
    await format.getByLabel('Schema', { exact: true }).fill(withMultiple);
    await scriptReplies(page, refusal(param, `'${param}' cannot be enforced: the grammar engine ignores it.`));
    await page.getByLabel('Message', { exact: true }).fill('Who is Ada?');
    await page.getByRole('button', { name: 'Send' }).click();
    const error = page.locator('#chat-schema-error');
    await expect(error).toContainText('multipleOf');
    await expect(error).toHaveAttribute('role', 'alert');
    await expect(format.getByLabel('Schema', { exact: true })).toHaveAttribute('aria-describedby', /chat-schema-error/);
    await expect(format.getByLabel('Schema', { exact: true })).toHaveValue(withMultiple);
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('Who is Ada?');
    await expect(page.getByTestId('message')).toHaveCount(0);
    await expect(page.getByTestId('chat-status')).toHaveText('The message was not sent.');
    // The refusal was about what was sent: once the schema is edited, it is no longer shown.
    await format.getByLabel('Schema', { exact: true }).press('End');
    await page.keyboard.type(' ');
    await expect(error).toHaveCount(0);
    await expect(format.getByLabel('Schema', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');

    // A tool's parameters: beside that tool's editor.
    await format.getByLabel('Format').selectOption('text');
    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    await expect(tools.getByTestId('tool').nth(1).getByLabel('Function name')).toHaveValue('get_weather_2');
    const toolParam = 'tools[1].function.parameters.properties.city.pattern';
    await scriptReplies(page, refusal(toolParam, `'${toolParam}' is not a pattern the engine enforces.`));
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(tools.getByTestId('tool').nth(1).getByTestId('field-error')).toContainText(toolParam);
    await expect(tools.getByTestId('tool').nth(0).getByTestId('field-error')).toHaveCount(0);
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('Who is Ada?');
  });

  test('streamed tool calls are folded by index and shown; their results are sent as tool messages and the chat goes on', async ({ page }) => {
    await open(page);
    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    await scriptReplies(
      page,
      toolCallReply([
        { index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
        { index: 0, function: { arguments: '{"city": "Par' } },
        { index: 1, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo",' } },
        { index: 0, function: { arguments: 'is", "unit": "c"}' } },
        { index: 1, function: { arguments: '"unit":"f"}' } },
      ]),
    );
    await page.getByLabel('Message', { exact: true }).fill('Weather in Paris and Oslo?');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = lastAssistant(page);
    await expect(reply).toHaveAttribute('data-state', 'done');
    const calls = reply.getByTestId('tool-call');
    await expect(calls).toHaveCount(2);
    await expect(calls.getByTestId('tool-name')).toHaveText(['get_weather', 'get_weather']);
    expect(JSON.parse((await calls.nth(0).getByTestId('tool-arguments').textContent())!)).toEqual({ city: 'Paris', unit: 'c' });
    expect(JSON.parse((await calls.nth(1).getByTestId('tool-arguments').textContent())!)).toEqual({ city: 'Oslo', unit: 'f' });
    await expect(calls.nth(0).getByTestId('tool-arguments')).toContainText('"city": "Paris"');
    await expect(reply.getByTestId('tool-calls')).toContainText('finish_reason: tool_calls');
    await expect(page.getByTestId('chat-status')).toContainText('asks to call 2 tools');

    // Each call needs its result before the conversation goes on.
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await expect(calls.getByTestId('field-error')).toHaveCount(2);
    expect(await sentBodies(page)).toHaveLength(1);
    await calls.nth(0).getByLabel('Tool result').fill('{"temperature": 21}');
    await calls.nth(1).getByLabel('Tool result').fill('{"temperature": 48}');
    await expect(calls.nth(1).getByLabel('Tool result for get_weather (call 2 of 2)')).toBeVisible();

    // The calls and the typed results survive a reload.
    await page.reload();
    await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
    const callsAgain = lastAssistant(page).getByTestId('tool-call');
    await expect(callsAgain).toHaveCount(2);
    await expect(callsAgain.nth(1).getByLabel('Tool result')).toHaveValue('{"temperature": 48}');

    await scriptReplies(page, textReply(['It is 21 C in Paris ', 'and 48 F in Oslo.']));
    await page.getByRole('button', { name: 'Send the tool results' }).click();
    await expect(page.getByTestId('message')).toHaveCount(5);
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
    await expect(lastAssistant(page).getByTestId('message-text')).toHaveText('It is 21 C in Paris and 48 F in Oslo.');
    const roles = await page.getByTestId('message').evaluateAll((els) => els.map((e) => e.getAttribute('data-role')));
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'assistant']);
    await expect(page.getByTestId('message').nth(2)).toContainText('get_weather');
    await expect(page.getByRole('button', { name: 'Send the tool results' })).toHaveCount(0);

    const [body] = await sentBodies(page);
    const messages = body!['messages'] as Record<string, unknown>[];
    expect(messages.slice(-3)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "c"}' } },
          { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"f"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_a', content: '{"temperature": 21}' },
      { role: 'tool', tool_call_id: 'call_b', content: '{"temperature": 48}' },
    ]);

    // And on: the next message carries the whole exchange.
    await scriptReplies(page, textReply(['Yes.']));
    await page.getByLabel('Message', { exact: true }).fill('Is Oslo colder?');
    await page.keyboard.press('Enter');
    await expect(page.getByTestId('message')).toHaveCount(7);
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
    const [, next] = await sentBodies(page);
    expect((next!['messages'] as { role: string }[]).map((m) => m.role).slice(-5)).toEqual(['assistant', 'tool', 'tool', 'assistant', 'user']);
  });

  test('a JSON reply cut at max_tokens, or not JSON, says so above its raw text', async ({ page }) => {
    await open(page);
    const format = await openSection(page, 'format-settings');
    await format.getByLabel('Format').selectOption('json_object');
    await scriptReplies(page, textReply(['{"label": ', '"posi'], 'length'));
    await page.getByLabel('Message', { exact: true }).fill('Rate it.');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = lastAssistant(page);
    await expect(reply).toHaveAttribute('data-state', 'done');
    await expect(reply.getByTestId('json-note')).toHaveText('The reply was cut at max_tokens; the JSON is incomplete.');
    await expect(reply.getByTestId('message-text')).toHaveText('{"label": "posi');
    await expect(reply.getByTestId('reply-json')).toHaveCount(0);
    const [body] = await sentBodies(page);
    expect(body!['response_format']).toEqual({ type: 'json_object' });

    await scriptReplies(page, textReply(['not json']));
    await page.getByLabel('Message', { exact: true }).fill('Again.');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('message')).toHaveCount(4);
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
    await expect(lastAssistant(page).getByTestId('json-note')).toContainText('The reply is not valid JSON');
  });
});

/**
 * The engine's side: structured output enforced while a model writes. Random weights write
 * nothing sensible, so the shape of the reply is the engine's doing alone.
 */
test.describe('structured output and tools against the engine (tiny-random-qwen2)', () => {
  const QWEN = 'tiny-random-qwen2';

  test('engine: a json_schema reply of a random-weight Qwen2.5 is shown as a parsed object that fits the schema', async ({ page }) => {
    await open(page, QWEN, 'fp32');
    await page.getByLabel('Max tokens').fill('400');
    await page.getByLabel('Seed').fill('1');
    const format = await openSection(page, 'format-settings');
    await format.getByRole('button', { name: 'Sentiment' }).click();
    await page.getByLabel('Message', { exact: true }).fill('I love this phone.');
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = lastAssistant(page);
    await expect(reply).toHaveAttribute('data-state', 'done');
    await expect(reply.getByTestId('json-note')).toHaveCount(0);
    const value = JSON.parse((await reply.getByTestId('reply-json').textContent())!) as Record<string, unknown>;
    expect(Object.keys(value).sort()).toEqual(['confidence', 'label']);
    expect(['positive', 'neutral', 'negative']).toContain(value['label']);
    expect(Number.isInteger(value['confidence'])).toBe(true);
    expect(value['confidence']).toBeGreaterThanOrEqual(0);
    expect(value['confidence']).toBeLessThanOrEqual(100);
  });

  test('engine: a schema keyword the engine cannot enforce is refused beside the schema', async ({ page }) => {
    await open(page, QWEN, 'fp32');
    const format = await openSection(page, 'format-settings');
    await format.getByLabel('Format').selectOption('json_schema');
    // multipleOf is enforced now, whole and decimal (issue 57); a negation of a type is still refused at the keyword.
    const schema = JSON.stringify({ type: 'object', properties: { age: { type: 'integer', not: { const: 3 } } }, required: ['age'] }, null, 2);
    await format.getByLabel('Schema', { exact: true }).fill(schema);
    await page.getByLabel('Message', { exact: true }).fill('How old?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.locator('#chat-schema-error')).toContainText('"not" cannot be enforced');
    await expect(format.getByLabel('Schema', { exact: true })).toHaveValue(schema);
    await expect(page.getByLabel('Message', { exact: true })).toHaveValue('How old?');
    await expect(page.getByTestId('message')).toHaveCount(0);
  });

  test('engine: tools are accepted, and a conversation with tool calls and their results goes on', async ({ page }) => {
    // The calls come from a script (the engine's own calls are the next test); the reply to their
    // results comes from the engine, which reads the assistant's tool_calls and the tool messages
    // through Qwen2.5's chat template.
    await installChatStub(page);
    await open(page, QWEN, 'fp32');
    await page.getByLabel('Max tokens').fill('16');
    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    await scriptReplies(page, toolCallReply([{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "c"}' } }]));
    await page.getByLabel('Message', { exact: true }).fill('Weather in Paris?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(lastAssistant(page).getByTestId('tool-call')).toHaveCount(1);
    await lastAssistant(page).getByLabel('Tool result').fill('{"temperature": 21}');
    await page.getByRole('button', { name: 'Send the tool result' }).click();
    await expect(page.getByTestId('message')).toHaveCount(4);
    const reply = lastAssistant(page);
    await expect(reply).toHaveAttribute('data-state', 'done');
    await expect(reply.getByTestId('reply-stats')).toHaveAttribute('data-tokens', /^[1-9]/);
    await expect(page.getByTestId('chat-status')).toHaveText(/^Reply done/);
    const [, body] = await sentBodies(page);
    expect((body!['messages'] as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
  });

  test('engine: tool_choice required makes a random-weight Qwen2.5 call get_weather with fitting arguments; its result continues the chat', async ({ page }) => {
    await open(page, QWEN, 'fp32');
    await page.getByLabel('Max tokens').fill('200');
    await page.getByLabel('Seed').fill('2');
    const tools = await openSection(page, 'tools-settings');
    await tools.getByRole('button', { name: '+ Example: get_weather' }).click();
    await tools.getByLabel('Tool choice').selectOption('required');
    await page.getByLabel('Message', { exact: true }).fill('Weather in Paris?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByTestId('chat-status'), 'the engine writes tool calls').toHaveText(/^Reply done/);
    const reply = lastAssistant(page);
    await expect(reply).toHaveAttribute('data-state', 'done');
    await expect(reply.getByTestId('reply-stats')).toHaveAttribute('data-finish', 'tool_calls');
    const calls = reply.getByTestId('tool-call');
    expect(await calls.count()).toBeGreaterThanOrEqual(1);
    await expect(calls.first().getByTestId('tool-name')).toHaveText('get_weather');
    const args = JSON.parse((await calls.first().getByTestId('tool-arguments').textContent())!) as Record<string, unknown>;
    expect(typeof args['city']).toBe('string');
    expect((args['city'] as string).length).toBeLessThanOrEqual(40);
    expect(['c', 'f']).toContain(args['unit']);

    for (const box of await reply.getByLabel('Tool result').all()) await box.fill('{"temperature": 21}');
    await tools.getByLabel('Tool choice').selectOption('none');
    await page.getByRole('button', { name: /^Send the tool results?$/ }).click();
    await expect(page.getByTestId('message').and(page.locator('[data-role=tool]')).first()).toBeVisible();
    await expect(lastAssistant(page)).toHaveAttribute('data-state', 'done');
    await expect(lastAssistant(page).getByTestId('tool-calls')).toHaveCount(0);
  });
});
