/**
 * The stall drill in Chromium (issue 57): a response_format whose grammar takes far longer than
 * the compile's bound (10 s, grammar/worker-grammar-backend.ts) to compile — 64 word patterns
 * side by side, 13× the bound on tiny-random-llama3's 128k-token vocabulary on a quiet machine — is
 * answered 422 `schema_too_complex` through the service worker within the bound plus 1 s, naming
 * the schema (no one property holds most of it). Chats and decisions sent meanwhile are answered while it compiles (in
 * the nested grammar worker, off the engine's worker), the engine's worker is not restarted, and
 * structured output works after it.
 */
import { expect, test } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';
import { STALL_PATTERNS, wordPatterns } from '../test/support/stall-schema.ts';

const MODEL = 'tiny-random-llama3';
const BOUND_MS = 10_000;
// 64 word patterns side by side, none heavier than the others: ~130 s to compile on a quiet
// machine, 13× the bound (test/support/stall-schema.ts). Fewer were compiled within the bound on
// some machines: three lighter copies beside one pattern took 19 s under load but ~7.5 s quietly.
const patterns = wordPatterns(STALL_PATTERNS);
const HUGE = { type: 'object', properties: { id: { type: 'integer' }, ...patterns.properties }, required: ['id', ...patterns.required] };

test(`${MODEL}: a schema past the compile's bound is a 422 within the bound + 1 s; other requests are served meanwhile; nothing restarts`, async ({ page }) => {
  test.setTimeout(180_000);
  await page.goto(`/?model=${MODEL}&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  expect(await page.evaluate(() => (window as any).jev.ready)).toMatchObject({ state: 'ready', model: MODEL });
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  const out = await page.evaluate(async (huge) => {
    const jev = (window as any).jev;
    const post = (body: unknown) => fetch('/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const format = (schema: unknown) => ({ type: 'json_schema', json_schema: { name: 'out', schema } });
    const base = { model: 'jev', messages: [{ role: 'user', content: 'Hi' }], temperature: 0 };
    // Warm: xgrammar and the vocabulary's tables in the grammar worker (not counted in the bound).
    const warm = await post({ ...base, max_tokens: 8, response_format: format({ type: 'boolean' }) });
    const restartsBefore = jev.debug.restarts();
    const t0 = performance.now();
    const stalled = post({ ...base, max_tokens: 40, response_format: format(huge) }).then(async (r) => ({ status: r.status, body: await r.json(), at: performance.now() - t0 }));
    const answered: { what: string; status: number; at: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const chat = await post({ ...base, max_tokens: 4 });
      answered.push({ what: 'chat', status: chat.status, at: performance.now() - t0 });
      await jev.decisions.create({ model: 'jev', state: 'A ticket about a refund.', questions: { q: { type: 'choice', instructions: 'Pick one.', criteria: { yes: null, no: null } } } });
      answered.push({ what: 'decision', status: 200, at: performance.now() - t0 });
    }
    const refused = await stalled;
    const after = await post({ ...base, max_tokens: 8, response_format: format({ enum: ['x', 'y'] }) });
    return { warm: warm.status, refused, answered, after: { status: after.status, body: await after.json() }, restarts: jev.debug.restarts() - restartsBefore, status: await jev.status() };
  }, HUGE);

  expect(out.warm).toBe(200);
  expect(out.refused.status).toBe(422);
  // No one property holds most of the grammar here, so the schema itself is named (grammar/schema-weight.ts).
  expect(out.refused.body.error).toMatchObject({ code: 'schema_too_complex', param: 'response_format.json_schema.schema' });
  expect(out.refused.at).toBeGreaterThanOrEqual(BOUND_MS);
  expect(out.refused.at).toBeLessThan(BOUND_MS + 1_000);
  // Served while the grammar compiled: the first chat long before the bound.
  for (const a of out.answered) expect(a.status).toBe(200);
  expect(out.answered[0]!.at).toBeLessThan(BOUND_MS / 2);
  expect(out.answered.filter((a) => a.at < out.refused.at).length).toBeGreaterThanOrEqual(2);
  expect(out.restarts).toBe(0);
  expect(out.status).toMatchObject({ state: 'ready', model: MODEL });
  expect(out.after.status).toBe(200);
  expect(['"x"', '"y"']).toContain(out.after.body.choices[0].message.content);
});
