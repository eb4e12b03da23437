import { expect, test } from '@playwright/test';
import { EXTRA_PORT, DIST, MIRROR } from './support/env.ts';
import { startStatic } from './support/static-server.ts';
import { STRICT_CSP, watchViolations } from './support/csp.ts';

test('the playground works under a strict Content-Security-Policy, with no violation', async ({ page }) => {
  const site = await startStatic(DIST, EXTRA_PORT.cspSite, { 'Content-Security-Policy': STRICT_CSP });
  try {
    const violations = await watchViolations(page);
    await page.goto(`${site.url}/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
    const status = await page.evaluate(() => (window as any).jev.ready);
    expect(status.state).toBe('ready');
    await page.waitForFunction(() => !!navigator.serviceWorker.controller);
    const out = await page.evaluate(async () => {
      const d = await fetch('/v1/systemone', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'jev', state: 'hello', questions: { q: { type: 'noul', instructions: 'Is it a greeting?' } } }),
      }).then((r) => r.json());
      let text = '';
      for await (const c of await (window as any).jev.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: 'hi' }], max_tokens: 6, stream: true })) {
        text += c.choices[0]?.delta?.content ?? '';
      }
      // Structured output loads @mlc-ai/web-xgrammar's wasm in the worker: 'wasm-unsafe-eval' is all it needs.
      const json = await (window as any).jev.chat.completions.create({
        model: 'jev',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 24,
        temperature: 0,
        response_format: { type: 'json_schema', json_schema: { name: 'b', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
      });
      return { noul: d.answers.q.noul, text, json: json.choices[0].message.content };
    });
    expect(typeof out.noul).toBe('number');
    expect(typeof JSON.parse(out.json).ok).toBe('boolean');
    expect(await violations()).toEqual([]);
  } finally {
    await site.close();
  }
});
