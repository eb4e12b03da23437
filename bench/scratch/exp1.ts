import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPage, serveStatic, DIST } from '../lib/serve.ts';
import { startMirror } from '../../e2e/support/mirror-server.ts';

await buildPage();
const site = await serveStatic(DIST);
const mirror = await startMirror(['/work/main/models', '/work/shared/models']);
const dir = mkdtempSync(join(tmpdir(), 'jevbench-'));
const ctx = await chromium.launchPersistentContext(dir, { executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox','--enable-unsafe-webgpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run','--enable-blink-features=ForceEagerMeasureMemory'] });
const page = await ctx.newPage();
page.on('console', (m) => console.log('console:', m.text()));
page.on('pageerror', (e) => console.log('pageerror:', e));
await page.goto(site.url);
await page.waitForFunction(() => (window as any).bench);
const cdp = await ctx.newCDPSession(page);
const workers: string[] = [];
cdp.on('Target.attachedToTarget' as any, (e: any) => { console.log('attached', e.targetInfo.type, e.sessionId); workers.push(e.sessionId); });
const pending = new Map<number, (v: any) => void>();
cdp.on('Target.receivedMessageFromTarget' as any, (e: any) => { const m = JSON.parse(e.message); pending.get(m.id)?.(m); });
try { await cdp.send('Target.setAutoAttach' as any, { autoAttach: true, waitForDebuggerOnStart: false, flatten: false }); } catch (e) { console.log('autoattach err', e); }
const call = (name: string, ...args: unknown[]) => page.evaluate(([n, a]) => (window as any).bench.call(n, ...a), [name, args] as const);
console.log(await call('info'));
await new Promise((r) => setTimeout(r, 500));
let id = 1;
const heap = async () => { for (const s of workers) { const i = id++; const p = new Promise((r) => pending.set(i, r)); await cdp.send('Target.sendMessageToTarget' as any, { sessionId: s, message: JSON.stringify({ id: i, method: 'Runtime.getHeapUsage' }) }); console.log('heap', JSON.stringify(await p)); } };
await heap();
const model = process.argv[2] ?? 'TinyStories-656K';
const dtype = process.argv[3] ?? 'fp32';
console.log(await call('load', { model, host: mirror.url, device: 'wasm', dtype }));
await heap();
console.log(await page.evaluate(() => (window as any).bench.memory()));
const S = Number(process.argv[4] ?? 64);
const Qs = (process.argv[5] ?? '1,4').split(',').map(Number);
const setup = await call('setupDecisions', 'a', S, 1);
console.log(JSON.stringify(setup));
for (const q of Qs) {
  { const r: any = await call('engineDecision', 'a', q); console.log('engine', r.ms, r.tokens, JSON.stringify(r.trace)); }
  { const r: any = await call('naiveDecision', 'a', q); console.log('naive', r.ms, r.tokens); }
}
await heap();
await ctx.close(); await site.close(); await mirror.close();
