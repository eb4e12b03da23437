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
  args: ['--no-sandbox','--enable-unsafe-webgpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run'] });
const page = await ctx.newPage();
page.on('pageerror', (e) => console.log('pageerror:', e));
await page.goto(site.url);
await page.waitForFunction(() => (window as any).bench);
const call = (name: string, ...args: unknown[]) => page.evaluate(([n, a]) => (window as any).bench.call(n, ...a), [name, args] as const);
const model = process.argv[2] ?? 'smollm2-135m-random';
const dtype = process.argv[3] ?? 'fp32';
console.log((await call('load', { model, host: mirror.url, device: 'wasm', dtype, threads: Number(process.env.THREADS ?? 2) }) as any).ms);
const specs = JSON.parse(process.argv[4] ?? '[[90,0],[90,128],[218,0],[1,0],[1,128],[1,512]]');
for (const [n, past] of specs) console.log(n, past, JSON.stringify(await call('profileForward', n, past, 3)));
await ctx.close(); await site.close(); await mirror.close();
