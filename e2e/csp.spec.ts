import { expect, test } from '@playwright/test';
import { EXTRA_PORT, DIST, MIRROR } from './support/env.ts';
import { startStatic } from './support/static-server.ts';
import { STRICT_CSP } from './support/csp.ts';

test('the playground works under a strict Content-Security-Policy, with no violation', async ({ page }) => {
  const site = await startStatic(DIST, EXTRA_PORT.cspSite, { 'Content-Security-Policy': STRICT_CSP });
  try {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        (window as any).violations = [...((window as any).violations ?? []), `${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`];
      });
    });
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
      return { noul: d.answers.q.noul, text, violations: (window as any).violations ?? [] };
    });
    expect(typeof out.noul).toBe('number');
    expect(out.violations).toEqual([]);
    expect(violations).toEqual([]);
  } finally {
    await site.close();
  }
});
