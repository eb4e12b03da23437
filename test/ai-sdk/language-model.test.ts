/**
 * The AI SDK's own functions, unmodified, against `jevLocal(client).languageModel()` over a client
 * on an in-process engine: `generateText` and `streamText` give the reply a direct
 * `client.chat.completions.create` gives (temperature 0), `generateObject` and `streamObject` an
 * object the zod schema accepts (the model has random weights: its free reply is not JSON, so a
 * valid object proves the constraint), a tool loop calls the tool with arguments its schema
 * accepts and answers after the result, a thinking model's reasoning comes back as reasoning parts,
 * and an abort rejects with an AbortError.
 */
import type { ProviderV4 } from '@ai-sdk/provider';
import { createProviderRegistry, generateObject, generateText, stepCountIs, streamObject, streamText, tool } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { jevLocal } from '../../src/ai-sdk/index.ts';
import type { ChatCompletion } from '../../src/contract/index.ts';
import type { Engine } from '../../src/engine/engine.ts';
import { createRemoteClient } from '../../src/facade/remote-client.ts';
import type { JevClient } from '../../src/facade/jev-client.ts';
import { localClient } from '../support/local-client.ts';
import { GENERATED } from '../support/models.ts';

const MODEL = 'tiny-random-llama3';
const PROMPT = 'Describe a user.';

const TICKET = z.object({
  title: z.string().min(1).max(10),
  priority: z.enum(['low', 'medium', 'high']),
  estimate: z.int().min(1).max(13),
  done: z.boolean(),
  labels: z.array(z.enum(['bug', 'ui', 'api'])).max(2),
});
const WEATHER = z.object({ city: z.enum(['Paris', 'Tokyo', 'Lima']), days: z.int().min(1).max(7) });

describe(`jevLocal(client).languageModel() under the AI SDK, on ${MODEL}`, () => {
  let client: JevClient;
  beforeAll(async () => {
    ({ client } = await localClient(GENERATED, MODEL));
  });
  const direct = (body: Record<string, unknown>) =>
    client.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: PROMPT }], temperature: 0, ...body }) as Promise<ChatCompletion>;

  it('generateText and streamText: the reply, finish reason and usage of a direct call', async () => {
    const jev = jevLocal(client);
    const whole = await generateText({ model: jev('jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 16, maxRetries: 0 });
    const want = await direct({ max_tokens: 16 });
    expect(whole.text).toBe(want.choices[0]!.message.content);
    expect(whole.text.length).toBeGreaterThan(0);
    expect(whole.finishReason).toBe(want.choices[0]!.finish_reason === 'length' ? 'length' : 'stop');
    expect(whole.usage.inputTokens).toBe(want.usage.prompt_tokens);
    expect(whole.usage.outputTokens).toBe(want.usage.completion_tokens);
    expect(whole.response.modelId).toBe(want.model);

    const streamed = streamText({ model: jev.languageModel('jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 16, maxRetries: 0 });
    const deltas: string[] = [];
    for await (const delta of streamed.textStream) deltas.push(delta);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(whole.text);
    expect(await streamed.finishReason).toBe(whole.finishReason);
    expect((await streamed.usage).outputTokens).toBe(want.usage.completion_tokens);

    // Instructions (the system message) and an earlier turn reach the engine as chat messages.
    const turns = [
      { role: 'user' as const, content: 'Hello.' },
      { role: 'assistant' as const, content: 'Hi.' },
      { role: 'user' as const, content: PROMPT },
    ];
    const multi = await generateText({ model: jev('jev'), instructions: 'Be brief.', messages: turns, temperature: 0, maxOutputTokens: 8, maxRetries: 0 });
    const wantMulti = (await client.chat.completions.create({ model: 'jev', messages: [{ role: 'system', content: 'Be brief.' }, ...turns], temperature: 0, max_tokens: 8 })) as ChatCompletion;
    expect(multi.text).toBe(wantMulti.choices[0]!.message.content);
  });

  it('generateObject and streamObject: an object the schema accepts, the same whole and streamed', async () => {
    const jev = jevLocal(client);
    const settings = { model: jev('jev'), prompt: PROMPT, schema: TICKET, schemaName: 'ticket', temperature: 0, seed: 7, maxOutputTokens: 120, maxRetries: 0 };
    const whole = await generateObject(settings);
    expect(whole.finishReason).toBe('stop');
    expect(TICKET.safeParse(whole.object).success).toBe(true);
    const stream = streamObject(settings);
    const partials: unknown[] = [];
    for await (const partial of stream.partialObjectStream) partials.push(partial);
    expect(await stream.object).toEqual(whole.object);
    expect(partials.length).toBeGreaterThan(2);
    expect(partials.at(-1)).toEqual(whole.object);
    // The same model unconstrained: not JSON at all.
    const free = await direct({ max_tokens: 24 });
    expect(() => JSON.parse(free.choices[0]!.message.content!)).toThrow();
  });

  it('a tool loop: the forced call validates, the tool runs, and the next step answers after its result', async () => {
    const jev = jevLocal(client);
    const ran: unknown[] = [];
    const result = await generateText({
      model: jev('jev'),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: tool({ description: 'The forecast for a city.', inputSchema: WEATHER, execute: async (input) => (ran.push(input), { forecast: 'sunny' }) }) },
      prepareStep: ({ stepNumber }) => ({ toolChoice: stepNumber === 0 ? 'required' : 'none' }),
      // One call per reply: a random model would otherwise go on calling until max_tokens.
      providerOptions: { jev: { parallelToolCalls: false } },
      stopWhen: stepCountIs(3),
      include: { requestBody: true },
      temperature: 0,
      maxOutputTokens: 120,
      maxRetries: 0,
    });
    expect(result.steps.length).toBe(2);
    const [first, second] = result.steps;
    expect(first!.finishReason).toBe('tool-calls');
    expect(first!.toolCalls.length).toBe(1);
    for (const call of first!.toolCalls) {
      expect(call.toolName).toBe('get_weather');
      expect(WEATHER.safeParse(call.input).success).toBe(true);
    }
    expect(ran).toEqual(first!.toolCalls.map((c) => c.input));
    expect(first!.toolResults.map((r) => r.output)).toEqual(ran.map(() => ({ forecast: 'sunny' })));
    expect(second!.toolCalls).toEqual([]);
    // The second step's request carried the call and its result as chat messages.
    const sent = (second!.request.body as { messages: any[] }).messages;
    expect(sent.map((m) => m.role)).toEqual(['user', 'assistant', ...first!.toolCalls.map(() => 'tool')]);
    expect((first!.request.body as { parallel_tool_calls?: boolean }).parallel_tool_calls).toBe(false);
    expect(sent[1].tool_calls.map((c: any) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual(first!.toolCalls.map((c) => [c.toolCallId, 'get_weather', c.input]));
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: first!.toolCalls[0]!.toolCallId, content: JSON.stringify({ forecast: 'sunny' }) });

    // Streamed: the same call, its input built from tool-input deltas.
    const streamed = streamText({
      model: jev('jev'),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: tool({ description: 'The forecast for a city.', inputSchema: WEATHER }) },
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      providerOptions: { jev: { parallelToolCalls: false } },
      temperature: 0,
      maxOutputTokens: 120,
      maxRetries: 0,
    });
    let deltas = '';
    for await (const part of streamed.fullStream) if (part.type === 'tool-input-delta') deltas += part.delta;
    const calls = await streamed.toolCalls;
    expect(calls.length).toBe(1);
    expect(JSON.parse(deltas)).toEqual(calls[0]!.input);
    expect(WEATHER.safeParse(calls[0]!.input).success).toBe(true);
    expect(await streamed.finishReason).toBe('tool-calls');
  });

  it('abort: generateText and streamText reject with an AbortError, and the engine answers after', async () => {
    const jev = jevLocal(client);
    const controller = new AbortController();
    // Held after two forward passes: the call is still running, by construction, when it is aborted.
    expect(await client.debug!.hold(2)).toBe(true);
    const pending = generateText({ model: jev('jev'), prompt: PROMPT, maxOutputTokens: 200, abortSignal: controller.signal, maxRetries: 0 }).catch((e) => e);
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    const error = await pending;
    await client.debug!.release();
    expect(error?.name).toBe('AbortError');

    const second = new AbortController();
    const streamed = streamText({ model: jev('jev'), prompt: PROMPT, maxOutputTokens: 200, abortSignal: second.signal, maxRetries: 0 });
    const seen: string[] = [];
    for await (const part of streamed.fullStream) {
      seen.push(part.type);
      if (part.type === 'text-delta') second.abort();
    }
    expect(seen).toContain('abort');
    expect(seen.filter((t) => t === 'text-delta').length).toBeLessThan(5);
    // The engine serves the next call.
    expect((await generateText({ model: jev('jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 4, maxRetries: 0 })).text.length).toBeGreaterThan(0);
  });

  it('refuses a file part by name, and an unknown model with the client\'s 404', async () => {
    const jev = jevLocal(client);
    const file = await generateText({
      model: jev('jev'),
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'file', data: new Uint8Array([1, 2, 3]), mediaType: 'application/pdf' }] }],
      maxRetries: 0,
    }).catch((e) => e);
    expect(file).toMatchObject({ status: 400, code: 'invalid_request', param: 'prompt[0].content[1]' });
    expect(file.message).toMatch(/application\/pdf.*reads text only/);
    const unknown = await generateText({ model: jev('gpt-5'), prompt: PROMPT, maxRetries: 0 }).catch((e) => e);
    expect(unknown).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(() => jev.embeddingModel('e')).toThrow(expect.objectContaining({ code: 'model_not_found' }));
    // A ProviderV4 (checked by the typecheck), so it registers like any other provider.
    const provider: ProviderV4 = jev;
    const registry = createProviderRegistry({ jev: provider });
    expect((await generateText({ model: registry.languageModel('jev:jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 4, maxRetries: 0 })).text).toBe(
      (await generateText({ model: jev('jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 4, maxRetries: 0 })).text,
    );
  });

  it('over a remote client: the same text through the server', async () => {
    const remote = createRemoteClient({ baseURL: 'https://jev.example', fetch: client.fetch });
    const settings = { prompt: PROMPT, temperature: 0, maxOutputTokens: 12, maxRetries: 0 };
    const here = await generateText({ model: jevLocal(client)('jev'), ...settings });
    const there = streamText({ model: jevLocal(remote)('jev'), ...settings });
    expect(await there.text).toBe(here.text);
  });
});

describe('reasoning parts, on tiny-random-qwen3 with a template that opens the think block', () => {
  let client: JevClient;
  let engine: Engine;
  beforeAll(async () => {
    ({ client, engine } = await localClient(GENERATED, 'tiny-random-qwen3'));
    // As Qwen3's thinking-2507 models do: the prompt ends inside <think>, so the reply starts as reasoning.
    const tokenizer = engine.languageModel!.tokenizer as unknown as { chat_template: string };
    const generation = "{{- '<|im_start|>assistant\\n' }}";
    expect(tokenizer.chat_template).toContain(generation);
    tokenizer.chat_template = tokenizer.chat_template.replace(generation, "{{- '<|im_start|>assistant\\n<think>\\n' }}");
  });

  it('generateText and streamText: reasoning as reasoning parts, the answer as text, as the chat response splits them', async () => {
    const jev = jevLocal(client);
    const settings = { model: jev('jev'), prompt: PROMPT, temperature: 0, maxOutputTokens: 12, maxRetries: 0 };
    const want = (await client.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: PROMPT }], temperature: 0, max_tokens: 12 })) as ChatCompletion;
    const reasoning = want.choices[0]!.message.reasoning_content!;
    expect(reasoning.length).toBeGreaterThan(0);
    const whole = await generateText(settings);
    expect(whole.reasoningText).toBe(reasoning);
    expect(whole.text).toBe(want.choices[0]!.message.content);
    expect(whole.content[0]).toEqual({ type: 'reasoning', text: reasoning });

    const streamed = streamText(settings);
    let streamedReasoning = '';
    const order: string[] = [];
    for await (const part of streamed.fullStream) {
      if (part.type === 'reasoning-delta') streamedReasoning += part.text;
      if (part.type.startsWith('reasoning') || part.type.startsWith('text')) order.push(part.type);
    }
    expect(streamedReasoning).toBe(reasoning);
    expect(order[0]).toBe('reasoning-start');
    expect(order.indexOf('reasoning-end')).toBeGreaterThan(order.lastIndexOf('reasoning-delta'));
    expect(await streamed.text).toBe(whole.text);
  });
});
