/**
 * Structured output in Chromium: a json_schema chat completion through the service worker's
 * `/v1/chat/completions` (whole and streamed) on a generated family model, on wasm. The engine
 * loads @mlc-ai/web-xgrammar (its own chunk, a dynamic import in the worker) for the first request
 * that needs it; the reply parses and validates (ajv, here in Node), and a schema keyword the
 * engine cannot enforce is a 400 pointing at it.
 */
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect, test } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';
import { PERSON_SCHEMA } from '../test/support/person-schema.ts';

const MODEL = 'tiny-random-llama3';
const SCHEMA = PERSON_SCHEMA;

test(`${MODEL}: a json_schema chat through the service worker validates, whole and streamed`, async ({ page }) => {
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const out = await page.evaluate(async (schema) => {
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
    const refused = await post({ ...request, response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'integer', multipleOf: 3 } } } });
    return { whole, streamed, finish, contentType: res.headers.get('Content-Type'), refused: { status: refused.status, body: await refused.json() } };
  }, SCHEMA);

  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  const validate = ajv.compile(SCHEMA);
  for (const reply of [...out.whole.map((r: any) => r.choices[0]), { message: { content: out.streamed }, finish_reason: out.finish }]) {
    expect(reply.finish_reason).toBe('stop');
    const value = JSON.parse(reply.message.content);
    expect(validate(value), `${reply.message.content}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }
  expect(out.contentType).toMatch(/text\/event-stream/);
  expect(out.refused.status).toBe(400);
  expect(out.refused.body.error).toMatchObject({ code: 'invalid_request', param: 'response_format.json_schema.schema.multipleOf' });
});
