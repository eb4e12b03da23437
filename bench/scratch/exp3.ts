import { chromium } from 'playwright-core';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveStatic, DIST } from '../lib/serve.ts';
import { startMirror } from '../../e2e/support/mirror-server.ts';
import { WorkerHeap } from '../lib/worker-heap.ts';

const site = await serveStatic(DIST);
const mirror = await startMirror(['/work/main/models', '/work/shared/models']);
const dir = mkdtempSync(join(tmpdir(), 'jevbench-'));
const ctx = await chromium.launchPersistentContext(dir, { executablePath: '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox','--enable-unsafe-webgpu','--disable-background-networking','--disable-component-update','--disable-sync','--no-first-run','--enable-blink-features=ForceEagerMeasureMemory'] });
const page = await ctx.newPage();
const mode = process.argv[2];
const heap = new WorkerHeap();
if (mode !== 'nocdp') await heap.attach(page);
await page.goto(site.url);
await page.waitForFunction(() => (window as any).bench);
if (mode === 'sampling') heap.start();
const call = (name: string, ...args: unknown[]) => page.evaluate(([n, a]) => (window as any).bench.call(n, ...a), [name, args] as const);
await call('load', { model: 'TinyStories-656K', host: mirror.url, device: 'wasm', dtype: 'fp32' });
for (let i = 0; i < 2; i++) {
  const t0 = Date.now();
  const m = await Promise.race([page.evaluate(() => (window as any).bench.memory()), new Promise((r) => setTimeout(() => r('timeout'), 20000))]);
  console.log(mode, Date.now() - t0, JSON.stringify(m));
}
await ctx.close(); await site.close(); await mirror.close(); process.exit(0);
