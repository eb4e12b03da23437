/**
 * Unmodified client libraries against the engine, in Chromium: the `openai` client
 * (`chat.completions.parse` with `zodResponseFormat`, `json_object`, tools whole and streamed) and the
 * Vercel AI SDK through `@ai-sdk/openai-compatible` with `supportsStructuredOutputs: true`
 * (`generateObject`, `streamObject`, `generateText` with tools). Each runs against the service
 * worker (`baseURL: location.origin + '/v1'`) and against `client.fetch` (the library client's
 * fetch, passed as the client's `fetch`), and the same request through the facade's own
 * `chat.completions.create`; at temperature 0 the three give the same reply.
 *
 * The model has random weights: its unconstrained reply is not JSON (checked), so a reply that
 * validates proves the constraint. Validated twice: by the zod schema in the page, and by ajv
 * (+ ajv-formats) in Node against the JSON schema the client sent. The schemas are bounded (short
 * strings, enums, integer ranges, short lists), so a random model closes them within `max_tokens`.
 */
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { expect, test, type Page } from './support/warm-context.ts';
import { CLIENT_BUNDLE } from './support/client-bundle.ts';
import { MIRROR } from './support/env.ts';

const MODEL = 'tiny-random-llama3';
const PROMPT = 'Describe a user.';

/** The tools the tool tests offer: bounded parameters, so a forced call always closes. */
const WEATHER = {
  type: 'object',
  properties: {
    city: { type: 'string', enum: ['Paris', 'Tokyo', 'Lima'] },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['c', 'f'] },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
};
const LOOKUP = {
  type: 'object',
  properties: { name: { type: 'string', minLength: 1, maxLength: 8 }, active: { type: 'boolean' } },
  required: ['name'],
  additionalProperties: false,
};
const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'The forecast for a city.', parameters: WEATHER } },
  { type: 'function', function: { name: 'lookup_user', description: 'Find a user by name.', parameters: LOOKUP } },
];
const PARAMETERS: Record<string, object> = { get_weather: WEATHER, lookup_user: LOOKUP };

/** The playground on the model, controlled by its service worker, with the client libraries loaded. */
async function open(page: Page) {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: CLIENT_BUNDLE });
}

/** ajv (+ formats) on a schema; its `$schema` (draft-07 from openai's helper, 2020-12 from zod) is dropped: the keywords used here mean the same in both. */
function validator(schema: object) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const { $schema: _, ...keywords } = schema as Record<string, unknown>;
  const validate = ajv.compile(keywords);
  return (value: unknown, label: string) => expect(validate(value), `${label}: ${JSON.stringify(value)} ${JSON.stringify(validate.errors)}`).toBe(true);
}

interface Call { id: string; type: string; function: { name: string; arguments: string } }

/** Each call is a function call to an offered tool, with arguments that parse and validate against its parameters. */
function expectValidCalls(calls: Call[] | undefined, label: string, only?: string) {
  expect(calls?.length, label).toBeGreaterThan(0);
  for (const call of calls!) {
    expect(call.type, label).toBe('function');
    expect(typeof call.id, label).toBe('string');
    expect(Object.keys(PARAMETERS), label).toContain(call.function.name);
    if (only) expect(call.function.name, label).toBe(only);
    validator(PARAMETERS[call.function.name]!)(JSON.parse(call.function.arguments), `${label} ${call.function.name}`);
  }
}

const namesAndArguments = (calls: Call[]) => calls.map((c) => [c.function.name, c.function.arguments]);

test.describe('unmodified client libraries: structured output', () => {
  test('openai: chat.completions.parse with zodResponseFormat, and json_object, through the service worker, client.fetch and the facade', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (prompt) => {
      const { OpenAI, z, zodResponseFormat } = globalThis as any;
      const jev = (window as any).jev;
      const Person = z.object({
        name: z.string().min(1).max(8),
        age: z.int().min(0).max(120),
        role: z.enum(['admin', 'user', 'guest']),
        since: z.string().nullable().meta({ format: 'date' }),
        tags: z.array(z.string().max(4)).max(2),
      });
      const format = zodResponseFormat(Person, 'person');
      const options = { apiKey: 'local', dangerouslyAllowBrowser: true, maxRetries: 0 };
      const clients = {
        serviceWorker: new OpenAI({ ...options, baseURL: location.origin + '/v1' }),
        clientFetch: new OpenAI({ ...options, baseURL: 'http://jev.local/v1', fetch: jev.fetch }),
      };
      const base = { model: 'jev', messages: [{ role: 'user', content: prompt }], max_tokens: 120 };
      const parsed: Record<string, { parsed: unknown; content: string; finish: string; zod: boolean }> = {};
      const parse = async (label: string, client: any, extra: object) => {
        const done = await client.chat.completions.parse({ ...base, ...extra, response_format: format });
        const choice = done.choices[0];
        parsed[label] = { parsed: choice.message.parsed, content: choice.message.content, finish: choice.finish_reason, zod: Person.safeParse(choice.message.parsed).success };
      };
      for (const [name, client] of Object.entries(clients)) await parse(name, client, { temperature: 0 });
      for (const seed of [1, 2]) await parse(`seed ${seed}`, clients.clientFetch, { temperature: 1, seed });
      const facade = await jev.chat.completions.create({ ...base, temperature: 0, response_format: format });
      const free = await clients.serviceWorker.chat.completions.create({ ...base, temperature: 0, max_tokens: 24 });
      const object = [];
      for (const client of Object.values(clients)) {
        const done = await client.chat.completions.create({ ...base, temperature: 1, seed: 3, response_format: { type: 'json_object' } });
        object.push({ content: done.choices[0].message.content, finish: done.choices[0].finish_reason });
      }
      return { schema: format.json_schema.schema, parsed, facade: facade.choices[0].message.content, free: free.choices[0].message.content, object };
    }, PROMPT);

    const validate = validator(out.schema);
    for (const [label, reply] of Object.entries(out.parsed)) {
      expect(reply.finish, label).toBe('stop');
      expect(reply.zod, `${label}: zod accepts ${reply.content}`).toBe(true);
      expect(JSON.parse(reply.content), label).toEqual(reply.parsed);
      validate(reply.parsed, label);
    }
    expect(out.parsed['clientFetch']!.content).toBe(out.parsed['serviceWorker']!.content);
    expect(out.facade).toBe(out.parsed['serviceWorker']!.content);
    // The same model unconstrained: not JSON at all.
    expect(() => JSON.parse(out.free)).toThrow();
    // json_object: the same seed gives the same object through both surfaces, and it is an object.
    expect(out.object[1]).toEqual(out.object[0]);
    expect(out.object[0]!.finish).toBe('stop');
    const value = JSON.parse(out.object[0]!.content);
    expect(typeof value === 'object' && value !== null && !Array.isArray(value), out.object[0]!.content).toBe(true);
  });

  test("length bounds the matcher keeps: zod's .email().max(40) and .max(60) through openai's parse and the AI SDK's generateObject, and in a tool's arguments through generateText", async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (prompt) => {
      const { OpenAI, z, zodResponseFormat, createOpenAICompatible, generateObject, generateText, tool } = globalThis as any;
      const Signup = z.object({ email: z.email().max(40), about: z.string().max(60) });
      const format = zodResponseFormat(Signup, 'signup');
      const baseURL = location.origin + '/v1';
      const client = new OpenAI({ apiKey: 'local', dangerouslyAllowBrowser: true, maxRetries: 0, baseURL });
      const replies: { label: string; value: any; content: string; finish: string; zod: boolean }[] = [];
      for (const seed of [1, 2, 3]) {
        const done = await client.chat.completions.parse({ model: 'jev', messages: [{ role: 'user', content: prompt }], max_tokens: 160, temperature: 1, seed, response_format: format });
        const choice = done.choices[0];
        replies.push({ label: `parse, seed ${seed}`, value: choice.message.parsed, content: choice.message.content, finish: choice.finish_reason, zod: Signup.safeParse(choice.message.parsed).success });
      }
      const provider = createOpenAICompatible({ name: 'jev', apiKey: 'local', baseURL, supportsStructuredOutputs: true });
      const whole = await generateObject({ prompt, temperature: 1, seed: 4, maxOutputTokens: 160, maxRetries: 0, model: provider('jev'), schema: Signup, schemaName: 'signup' });
      replies.push({ label: 'generateObject', value: whole.object, content: JSON.stringify(whole.object), finish: whole.finishReason, zod: Signup.safeParse(whole.object).success });
      // A tool's arguments, guarded from the call's begin: the same e-mail under the same key in two objects.
      const Order = z.object({ contact: z.object({ email: z.email().max(40) }), billing: z.object({ email: z.email().max(40) }) });
      const calls: { label: string; value: any; finish: string; zod: boolean }[] = [];
      for (const seed of [5, 6]) {
        const r = await generateText({ prompt, temperature: 1, seed, maxOutputTokens: 200, maxRetries: 0, model: provider('jev'), tools: { order: tool({ description: 'Place an order.', inputSchema: Order }) }, toolChoice: 'required' });
        for (const c of r.toolCalls) calls.push({ label: `generateText, seed ${seed}`, value: c.input, finish: r.finishReason, zod: Order.safeParse(c.input).success });
      }
      return { schema: format.json_schema.schema, replies, order: z.toJSONSchema(Order), calls };
    }, PROMPT);

    const validate = validator(out.schema);
    const lengths: number[] = [];
    for (const r of out.replies) {
      expect(r.finish, r.label).toBe('stop');
      expect(r.zod, `${r.label}: zod accepts ${r.content}`).toBe(true);
      validate(r.value, r.label);
      lengths.push([...r.value.email].length, [...r.value.about].length);
    }
    // A random model runs strings to their bounds (json-schema/length-guard.ts ended them, not luck).
    expect(lengths.filter((n) => n === 40 || n === 60).length, lengths.join(' ')).toBeGreaterThan(2);
    const validateOrder = validator(out.order);
    expect(out.calls.length).toBeGreaterThan(1);
    const emails: number[] = [];
    for (const c of out.calls) {
      expect(c.finish, c.label).toBe('tool-calls');
      expect(c.zod, `${c.label}: zod accepts ${JSON.stringify(c.value)}`).toBe(true);
      validateOrder(c.value, c.label);
      emails.push([...c.value.contact.email].length, [...c.value.billing.email].length);
    }
    expect(emails.some((n) => n >= 38), emails.join(' ')).toBe(true);
  });

  test('AI SDK: generateObject and streamObject through @ai-sdk/openai-compatible, on the service worker and client.fetch', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async (prompt) => {
      const { createOpenAICompatible, generateObject, streamObject, z } = globalThis as any;
      const jev = (window as any).jev;
      const schema = z.object({
        title: z.string().min(1).max(10),
        priority: z.enum(['low', 'medium', 'high']),
        estimate: z.int().min(1).max(13),
        done: z.boolean(),
        labels: z.array(z.enum(['bug', 'ui', 'api'])).max(2),
      });
      const providers = {
        serviceWorker: createOpenAICompatible({ name: 'jev', apiKey: 'local', baseURL: location.origin + '/v1', supportsStructuredOutputs: true }),
        clientFetch: createOpenAICompatible({ name: 'jev', baseURL: 'http://jev.local/v1', fetch: jev.fetch, supportsStructuredOutputs: true }),
      };
      const settings = { prompt, temperature: 0, seed: 7, maxOutputTokens: 120, maxRetries: 0 };
      const results: Record<string, unknown> = {};
      for (const [name, provider] of Object.entries(providers) as [string, any][]) {
        const whole = await generateObject({ ...settings, model: provider('jev'), schema, schemaName: 'ticket' });
        const stream = streamObject({ ...settings, model: provider('jev'), schema, schemaName: 'ticket' });
        const partials = [];
        for await (const partial of stream.partialObjectStream) partials.push(partial);
        const object = await stream.object;
        results[name] = {
          whole: whole.object,
          wholeFinish: whole.finishReason,
          zod: schema.safeParse(whole.object).success && schema.safeParse(object).success,
          object,
          partials,
          streamFinish: await stream.finishReason,
        };
      }
      return { results, schema: z.toJSONSchema(schema) };
    }, PROMPT);

    const validate = validator(out.schema);
    const results = out.results as Record<string, { whole: unknown; wholeFinish: string; zod: boolean; object: Record<string, unknown>; partials: unknown[]; streamFinish: string }>;
    for (const [name, r] of Object.entries(results)) {
      expect(r.wholeFinish, name).toBe('stop');
      expect(r.streamFinish, name).toBe('stop');
      expect(r.zod, name).toBe(true);
      validate(r.whole, `${name} generateObject`);
      validate(r.object, `${name} streamObject`);
      // Streamed and whole: the same greedy reply, built up over several partial objects.
      expect(r.object, name).toEqual(r.whole);
      expect(r.partials.length, name).toBeGreaterThan(2);
      expect(r.partials.at(-1), name).toEqual(r.object);
      expect(Object.keys(r.partials[0] as object).length, name).toBeLessThan(Object.keys(r.object).length);
    }
    expect(results['clientFetch']!.whole).toEqual(results['serviceWorker']!.whole);
  });
});

// Tool calls in OpenAI's shapes: a forced call (`required` or a named tool) always happens, its
// arguments validate against the tool's parameters (ajv, here in Node), streamed equals whole.
test.describe('unmodified client libraries: tool calls', () => {
  test('openai: forced tool calls, whole and streamed, then a tool-result turn, through the service worker, client.fetch and the facade', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async ({ tools }) => {
      const { OpenAI } = globalThis as any;
      const jev = (window as any).jev;
      const options = { apiKey: 'local', dangerouslyAllowBrowser: true, maxRetries: 0 };
      const clients = {
        serviceWorker: new OpenAI({ ...options, baseURL: location.origin + '/v1' }),
        clientFetch: new OpenAI({ ...options, baseURL: 'http://jev.local/v1', fetch: jev.fetch }),
      };
      const messages = [{ role: 'user', content: 'What is the weather in Paris this week?' }];
      const required = { model: 'jev', messages, tools, tool_choice: 'required', temperature: 0, max_tokens: 120 };
      const named = { ...required, tool_choice: { type: 'function', function: { name: 'lookup_user' } } };
      const results: Record<string, any> = {};
      for (const [name, client] of Object.entries(clients) as [string, any][]) {
        const whole = await client.chat.completions.create(required);
        const forced = await client.chat.completions.create(named);
        // Streamed, assembled by hand from delta.tool_calls as OpenAI streams them.
        const calls: any[] = [];
        let finish = null;
        for await (const chunk of await client.chat.completions.create({ ...required, stream: true })) {
          const choice = chunk.choices[0];
          if (!choice) continue;
          for (const d of choice.delta?.tool_calls ?? []) {
            const call = (calls[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
            if (d.id) call.id = d.id;
            if (d.type) call.type = d.type;
            call.function.name += d.function?.name ?? '';
            call.function.arguments += d.function?.arguments ?? '';
          }
          finish = choice.finish_reason ?? finish;
        }
        // Streamed, assembled by the client's own helper.
        const helper = await client.chat.completions.stream(required).finalChatCompletion();
        // The reply's message as the client returned it, then each call's result, as apps send them back.
        const message = whole.choices[0].message;
        const history = [
          ...messages,
          message,
          ...(message.tool_calls ?? []).map((c: any) => ({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ ok: true, tool: c.function.name }) })),
        ];
        const followUp = await client.chat.completions.create({ model: 'jev', messages: history, tools, temperature: 0, max_tokens: 16 });
        results[name] = {
          whole: { calls: message.tool_calls, finish: whole.choices[0].finish_reason, content: message.content },
          forced: { calls: forced.choices[0].message.tool_calls, finish: forced.choices[0].finish_reason },
          streamed: { calls, finish },
          helper: { calls: helper.choices[0].message.tool_calls, finish: helper.choices[0].finish_reason },
          followUp: { finish: followUp.choices[0].finish_reason, object: followUp.object },
        };
      }
      const facade = await jev.chat.completions.create(required);
      return { results, facade: { calls: facade.choices[0].message.tool_calls, finish: facade.choices[0].finish_reason } };
    }, { tools: TOOLS });

    const results = out.results as Record<string, Record<string, { calls: Call[]; finish: string; object?: string }>>;
    for (const [name, r] of Object.entries(results)) {
      for (const kind of ['whole', 'forced', 'streamed', 'helper'] as const) {
        expect(r[kind]!.finish, `${name} ${kind}`).toBe('tool_calls');
        expectValidCalls(r[kind]!.calls, `${name} ${kind}`, kind === 'forced' ? 'lookup_user' : undefined);
      }
      // Streamed equals whole (ids are minted per reply).
      expect(namesAndArguments(r['streamed']!.calls), name).toEqual(namesAndArguments(r['whole']!.calls));
      expect(namesAndArguments(r['helper']!.calls), name).toEqual(namesAndArguments(r['whole']!.calls));
      expect(r['followUp']!.object, name).toBe('chat.completion');
      expect(['stop', 'length', 'tool_calls'], name).toContain(r['followUp']!.finish);
    }
    expect(namesAndArguments(results['clientFetch']!['whole']!.calls)).toEqual(namesAndArguments(results['serviceWorker']!['whole']!.calls));
    expect(out.facade.finish).toBe('tool_calls');
    expect(namesAndArguments(out.facade.calls)).toEqual(namesAndArguments(results['serviceWorker']!['whole']!.calls));
  });

  test('AI SDK: generateText with tools (jsonSchema and zod inputs), required and named, on the service worker and client.fetch', async ({ page }) => {
    await open(page);
    const out = await page.evaluate(async ({ weather }) => {
      const { createOpenAICompatible, generateText, jsonSchema, tool, z } = globalThis as any;
      const jev = (window as any).jev;
      const tools = {
        get_weather: tool({ description: 'The forecast for a city.', inputSchema: jsonSchema(weather) }),
        lookup_user: tool({ description: 'Find a user by name.', inputSchema: z.object({ name: z.string().min(1).max(8), active: z.boolean().optional() }) }),
      };
      const providers = {
        serviceWorker: createOpenAICompatible({ name: 'jev', apiKey: 'local', baseURL: location.origin + '/v1', supportsStructuredOutputs: true }),
        clientFetch: createOpenAICompatible({ name: 'jev', baseURL: 'http://jev.local/v1', fetch: jev.fetch, supportsStructuredOutputs: true }),
      };
      const settings = { prompt: 'What is the weather in Paris this week?', tools, temperature: 0, maxOutputTokens: 120, maxRetries: 0 };
      const results: Record<string, unknown> = {};
      for (const [name, provider] of Object.entries(providers) as [string, any][]) {
        const required = await generateText({ ...settings, model: provider('jev'), toolChoice: 'required' });
        const named = await generateText({ ...settings, model: provider('jev'), toolChoice: { type: 'tool', toolName: 'lookup_user' } });
        const view = (r: any) => ({ finish: r.finishReason, calls: r.toolCalls.map((c: any) => ({ name: c.toolName, input: c.input, id: c.toolCallId })) });
        results[name] = { required: view(required), named: view(named) };
      }
      return results;
    }, { weather: WEATHER });

    const results = out as Record<string, Record<string, { finish: string; calls: { name: string; input: unknown; id: string }[] }>>;
    for (const [name, r] of Object.entries(results)) {
      for (const kind of ['required', 'named'] as const) {
        const label = `${name} ${kind}`;
        expect(r[kind]!.finish, label).toBe('tool-calls');
        expect(r[kind]!.calls.length, label).toBeGreaterThan(0);
        for (const call of r[kind]!.calls) {
          if (kind === 'named') expect(call.name, label).toBe('lookup_user');
          expect(typeof call.id, label).toBe('string');
          validator(PARAMETERS[call.name]!)(call.input, `${label} ${call.name}`);
        }
      }
    }
    expect(results['clientFetch']).toMatchObject({ required: { calls: results['serviceWorker']!['required']!.calls.map(({ name, input }) => ({ name, input })) } });
  });
});
