import { chromium } from '@playwright/test';
import { startModelHost } from '../e2e/support/model-host.ts';
import { GENERATED, VENDORED, CHROMIUM_ARGS, chromiumPath } from '../e2e/support/env.ts';
const MIRROR = 'http://127.0.0.1:6501';
console.log('start', new Date().toISOString());
const mirror = await startModelHost([GENERATED, VENDORED], 6501);
console.log('mirror up', new Date().toISOString());
const args = [...CHROMIUM_ARGS, ...(process.env.EXTRA ? process.env.EXTRA.split(' ') : [])];
const browser = await chromium.launch({ executablePath: chromiumPath(), args });
const n = Number(process.env.N ?? 3);
const persistent = process.env.PERSIST ? await chromium.launchPersistentContext(process.env.PERSIST, { executablePath: chromiumPath(), args }) : null;
const shared = persistent ?? (process.env.SHARED === '1' ? await browser.newContext() : null);
for (let i = 0; i < n; i++) {
  const ctx = shared ?? (await browser.newContext());
  const page = await ctx.newPage();
  page.on('console', (m) => { if (m.type() !== 'log' && m.type() !== 'debug') console.log('console', m.type(), m.text().slice(0, 300)); });
  page.on('pageerror', (e) => console.log('pageerror', String(e).slice(0, 300)));
  if (process.env.TRACE) await browser.startTracing(page, { path: `/tmp/trace-${i}.json`, categories: ['devtools.timeline', 'v8', 'v8.wasm', 'disabled-by-default-v8.compile', 'blink', 'loading', 'disabled-by-default-devtools.timeline'] });
  const t0 = Date.now();
  await page.goto(`http://127.0.0.1:6500/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  const tGoto = Date.now() - t0;
  await page.waitForLoadState('load');
  const tLoad = Date.now() - t0;
  await page.waitForFunction(() => !!(window as any).jev, null, { timeout: 60000 });
  const tJev = Date.now() - t0;
  await page.evaluate(() => (window as any).jev.ready);
  const tReady0 = Date.now() - t0;
  await page.waitForFunction(() => !!navigator.serviceWorker?.controller, null, { timeout: 60000 });
  const tSw = Date.now() - t0;
  await page.evaluate(() => (window as any).jev.ready);
  const tReady = Date.now() - t0;
  if (process.env.TRACE) await browser.stopTracing();
  const res = await page.evaluate(() => performance.getEntriesByType('resource').map((e: any) => [e.name.replace(/^https?:\/\/[^/]+/, '').slice(-60), Math.round(e.startTime), Math.round(e.duration), e.transferSize]));
  const pageOrigin = await page.evaluate(() => performance.timeOrigin);
  const wres: unknown[] = [];
  for (const w of page.workers().filter((w) => w.url().includes('engine.worker'))) {
    const r = await w.evaluate(() => ({ origin: performance.timeOrigin, res: (performance as any).getEntriesByType('resource').map((e: any) => [e.name.replace(/^https?:\/\/[^/]+/, '').slice(-60), Math.round(e.startTime), Math.round(e.duration), e.transferSize]) })).catch((e) => String(e));
    wres.push({ url: w.url().slice(-50), off: typeof r === 'string' ? null : Math.round(r.origin - pageOrigin), r: typeof r === 'string' ? r : r.res });
  }
  console.log(JSON.stringify({ i, tGoto, tLoad, tJev, tReady0, tSw, tReady }));
  for (const w of page.workers().filter((w) => w.url().includes('engine.worker'))) { const m = await w.evaluate(() => ({ o: performance.timeOrigin, m: performance.getEntriesByType('mark').map((e) => [e.name, Math.round(e.startTime)]), wasm: (performance as any).getEntriesByType('resource').filter((e: any) => e.name.endsWith('.wasm')).map((e: any) => [Math.round(e.startTime), Math.round(e.responseEnd)]) })).catch(() => null); if (m && m.m.length) console.log('marks', Math.round(m.o - (await page.evaluate(() => performance.timeOrigin))), JSON.stringify(m.m), JSON.stringify(m.wasm)); }
  if (process.env.QUIET) { await page.close(); if (!shared) await ctx.close(); continue; }
  console.log('page', JSON.stringify(res));
  console.log('workers', JSON.stringify(wres));
  await page.close();
  if (!shared) await ctx.close();
}
await browser.close();
process.exit(0);
