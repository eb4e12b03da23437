/**
 * Structured output in Chromium: a json_schema chat completion through the service worker's
 * `/v1/chat/completions` (whole and streamed) on a generated family model, on wasm. The engine
 * loads @mlc-ai/web-xgrammar (its own chunk, a dynamic import in the worker) for the first request
 * that needs it; the reply parses and validates (ajv, here in Node). Integer and decimal
 * `multipleOf` are enforced (the replies are multiples, checked here by arithmetic as well as by
 * ajv); a keyword the engine still cannot enforce (`not` of a type, `contains`) is a 400 pointing at it.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect, test } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';
import { PERSON_SCHEMA } from '../test/support/person-schema.ts';

const MODEL = 'tiny-random-llama3';
const SCHEMA = PERSON_SCHEMA;
/** Integer multiples, one unbounded and one two-sided, and a decimal one: enforced by the schema compiler's remainder automata. */
const MULTIPLES_SCHEMA = {
  type: 'object',
  properties: { n: { type: 'integer', multipleOf: 3 }, m: { type: 'integer', multipleOf: 7, minimum: -50, maximum: 50 }, d: { type: 'number', multipleOf: 0.25, minimum: 0, maximum: 10 } },
  required: ['n', 'm', 'd'],
  additionalProperties: false,
};

test(`${MODEL}: a json_schema chat through the service worker validates, whole and streamed`, async ({ page }) => {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const out = await page.evaluate(async ([schema, multiplesSchema]) => {
    const post = (body: unknown) =>
      fetch('/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const request = {
      model: 'jev',
      messages: [{ role: 'user', content: 'Describe a user.' }],
      max_tokens: 120,
      response_format: { type: 'json_schema', json_schema: { name: 'user', schema, strict: true } },
    };
    const whole = [];
    for (const seed of [1, 2, 3]) whole.push(await post({ ...request, temperature: 1, seed }).then((r) => r.json()));
    const res = await post({ ...request, temperature: 0, stream: true });
    const sse = await res.text();
    let streamed = '';
    let finish = null;
    for (const line of sse.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const chunk = JSON.parse(line.slice(6));
      streamed += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    const multiples = [];
    for (const seed of [1, 2, 3]) {
      const format = { type: 'json_schema', json_schema: { name: 'multiples', schema: multiplesSchema } };
      multiples.push(await post({ ...request, response_format: format, temperature: 1, seed }).then((r) => r.json()));
    }
    const refuse = async (schema: unknown) => {
      const r = await post({ ...request, response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } });
      return { status: r.status, body: await r.json() };
    };
    const refused = {
      not: await refuse({ type: 'integer', not: { const: 3 } }),
      contains: await refuse({ type: 'array', contains: { const: 1 } }),
    };
    return { whole, streamed, finish, contentType: res.headers.get('Content-Type'), multiples, refused };
  }, [SCHEMA, MULTIPLES_SCHEMA] as const);

  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const validate = ajv.compile(SCHEMA);
  for (const reply of [...out.whole.map((r: any) => r.choices[0]), { message: { content: out.streamed }, finish_reason: out.finish }]) {
    expect(reply.finish_reason).toBe('stop');
    const value = JSON.parse(reply.message.content);
    expect(validate(value), `${reply.message.content}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
  expect(out.contentType).toMatch(/text\/event-stream/);

  const validateMultiples = ajv.compile(MULTIPLES_SCHEMA);
  for (const reply of out.multiples.map((r: any) => r.choices?.[0])) {
    expect(reply?.finish_reason, JSON.stringify(reply)).toBe('stop');
    const value = JSON.parse(reply.message.content);
    expect(validateMultiples(value), `${reply.message.content}: ${JSON.stringify(validateMultiples.errors)}`).toBe(true);
    expect(Number.isSafeInteger(value.n) && value.n % 3 === 0, reply.message.content).toBe(true);
    expect(Number.isSafeInteger(value.m) && value.m % 7 === 0 && value.m >= -50 && value.m <= 50, reply.message.content).toBe(true);
    // A quarter is exact in binary: d · 4 is a whole number exactly when d is a multiple of 0.25.
    expect(Number.isInteger(value.d * 4) && value.d >= 0 && value.d <= 10, reply.message.content).toBe(true);
  }

  expect(out.refused.not.status).toBe(400);
  expect(out.refused.not.body.error).toMatchObject({ code: 'invalid_request', param: 'response_format.json_schema.schema.not' });
  expect(out.refused.contains.status).toBe(400);
  expect(out.refused.contains.body.error).toMatchObject({
    code: 'invalid_request',
    param: 'response_format.json_schema.schema.contains',
  });
});
