/**
 * A browser context shared by the tests that need a ready engine but not a fresh origin (no
 * storage, offline, download or service-worker lifecycle under test): one per Playwright worker,
 * across the spec files that import `test` from here.
 *
 * Why: a page in a fresh context compiles onnxruntime's 17 MB wasm again (lazily on the engine's
 * thread, then its hot functions at the top tier on background threads) and installs the service
 * worker again. A later page of the same context finds the compiled code in that context's code
 * cache and the worker installed. Measured on this 2-core machine (docs/reliability.md, "Where
 * CI's time goes"): a fresh context's page was ready after 5–7 s, a later page of a kept context
 * after 2.3–2.7 s (`InferenceSession.create` 0.7–0.8 s instead of 2.2–5.6 s).
 *
 * What is shared: the origin's storage (the service worker, Cache Storage, IndexedDB, local
 * storage) and the HTTP and code caches. Each test still gets a page of its own, and every page a
 * test opened is closed after it. A spec opts in by importing `test` from here.
 */
import { test as base, type BrowserContext } from '@playwright/test';
import { PREVIEW_PORT } from './env.ts';

/** The worker's warm context, opened at its first use, and again if it closed under a test (its browser crashed). */
class WarmContext {
  #context: Promise<BrowserContext> | null = null;
  #closed = false;
  constructor(private readonly open: () => Promise<BrowserContext>) {}

  get(): Promise<BrowserContext> {
    if (!this.#context || this.#closed) {
      this.#closed = false;
      this.#context = this.open().then((context) => {
        context.on('close', () => (this.#closed = true));
        return context;
      });
    }
    return this.#context;
  }

  async close(): Promise<void> {
    const context = this.#context;
    this.#context = null;
    if (context) await (await context).close().catch(() => undefined);
  }
}

export const test = base.extend<object, { warmContext: WarmContext }>({
  warmContext: [
    async ({ browser }, use) => {
      const warm = new WarmContext(() => browser.newContext({ baseURL: `http://127.0.0.1:${PREVIEW_PORT}` }));
      await use(warm);
      await warm.close();
    },
    { scope: 'worker' },
  ],
  context: async ({ warmContext }, use) => {
    const context = await warmContext.get();
    await use(context);
    // The test's pages go with it (their engines' workers with them); the context stays.
    await Promise.all(context.pages().map((page) => page.close()));
  },
});

export { expect } from '@playwright/test';
export type { Page } from '@playwright/test';
