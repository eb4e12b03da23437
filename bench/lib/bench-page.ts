/**
 * One page of the bench site (bench/page), opened in a browser context, with `call(name, ...args)`
 * into its worker (bench/page/bench.worker.ts) and the worker's heap sampled (worker-heap.ts).
 */
import type { BrowserContext, Page } from 'playwright-core';
import { WorkerHeap } from './worker-heap.ts';

/** One page of the bench site, with `call(name, ...args)` into its worker. */
export interface BenchPage {
  page: Page;
  heap: WorkerHeap;
  call<T = any>(name: string, ...args: unknown[]): Promise<T>;
  close(): Promise<void>;
}

export async function openPage(ctx: BrowserContext, url: string, log: (...a: unknown[]) => void): Promise<BenchPage> {
  const page = await ctx.newPage();
  page.setDefaultTimeout(0);
  page.on('pageerror', (e) => log('page error:', e.message));
  page.on('crash', () => log('the bench page crashed'));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('404')) log('console:', m.text());
  });
  const heap = new WorkerHeap();
  await heap.attach(page);
  await page.goto(url);
  await page.waitForFunction(() => (window as unknown as { bench?: unknown }).bench);
  heap.start();
  return {
    page,
    heap,
    call: (name, ...args) =>
      page.evaluate(([n, a]) => (window as unknown as { bench: { call(n: string, ...a: unknown[]): Promise<never> } }).bench.call(n, ...a), [name, args] as const),
    close: async () => {
      await heap.stop();
      await page.close();
    },
  };
}

