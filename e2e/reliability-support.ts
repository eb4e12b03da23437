import { existsSync, mkdirSync, statSync, utimesSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { build } from 'vite';
import { REPO } from '../scripts/models/roots.ts';
import { MIRROR } from './support/ports.ts';

const HARNESS = resolve(REPO, 'test/reliability/browser-harness.ts');
export const HARNESS_BUNDLE = resolve(REPO, 'node_modules/.cache/jev-e2e-reliability/harness.js');

/** Bundles the reliability workload (generator of malformed requests, mixed jobs) for the page. */
export async function buildHarness(): Promise<string> {
  const sources = [...['browser-harness.ts', 'malformed.ts', 'workload.ts', 'storm.ts'].map((f) => `test/reliability/${f}`), ...['arbitraries.ts', 'campaign.ts', 'json-text.ts', 'probes.ts'].map((f) => `test/fuzz/${f}`), 'scripts/soak/mix.ts'].map(
    (f) => statSync(resolve(REPO, f)).mtimeMs,
  );
  if (existsSync(HARNESS_BUNDLE) && statSync(HARNESS_BUNDLE).mtimeMs > Math.max(...sources)) return HARNESS_BUNDLE;
  mkdirSync(resolve(HARNESS_BUNDLE, '..'), { recursive: true });
  // Dated from the build's start, not its end: a source edited while it ran makes it stale.
  const started = new Date();
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: resolve(HARNESS_BUNDLE, '..'),
      emptyOutDir: false,
      lib: { entry: HARNESS, formats: ['iife'], name: 'jevReliabilityHarness', fileName: () => 'harness.js' },
      minify: false,
    },
  });
  utimesSync(HARNESS_BUNDLE, started, started);
  return HARNESS_BUNDLE;
}

export const appUrl = (device: 'wasm' | 'webgpu' = 'wasm') => `/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=${device}&dtype=fp32`;

/**
 * Opens the playground hosting the engine; waits for the model and for the service worker to
 * control the page; adds the harness. Uncaught errors and unhandled rejections of the page are
 * collected in the returned list (the tests assert it stays empty).
 */
export async function openApp(page: Page, device: 'wasm' | 'webgpu' = 'wasm'): Promise<string[]> {
  const errors = watchErrors(page);
  await page.goto(appUrl(device));
  await page.evaluate(() => (window as any).jev.ready);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
  await page.addScriptTag({ path: await buildHarness() });
  return errors;
}

/** `pageerror` events, and unhandled rejections the page saw (listened for before any script runs). */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  void page.addInitScript(() => {
    (window as any).__unhandled = [];
    window.addEventListener('unhandledrejection', (e) => (window as any).__unhandled.push(String(e.reason?.message ?? e.reason)));
  });
  return errors;
}

/** Unhandled rejections the page recorded. */
export const unhandledIn = (page: Page): Promise<string[]> => page.evaluate(() => (window as any).__unhandled ?? []);

/**
 * A page of this origin, controlled by the service worker, that does not host the engine: its
 * relay is switched off before the app starts (as on a page of an embedding app that never
 * calls serveHttp), so the service worker must find another page, or answer 503.
 */
export async function openNonHostingPage(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const add = ServiceWorkerContainer.prototype.addEventListener;
    ServiceWorkerContainer.prototype.addEventListener = function (this: ServiceWorkerContainer, type: string, ...rest: unknown[]) {
      if (type === 'message') return;
      return (add as (...a: unknown[]) => void).call(this, type, ...rest);
    } as typeof add;
  });
  // No model to load here: the page only makes requests.
  await page.goto(`/?model=no-such-model&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  await page.waitForFunction(() => !!navigator.serviceWorker.controller);
}

/**
 * The JS heap of the page's engine worker, over the Chrome DevTools Protocol (the worker's own
 * `performance` has no memory figures): after a full GC, the V8 heap in use and the bytes of
 * ArrayBuffer backing stores (tensor data copied out of wasm lives there). Playwright's CDP
 * session addresses only its page, so messages to the worker are relayed (Target.sendMessageToTarget).
 */
export async function engineWorkerHeap(page: Page): Promise<() => Promise<{ used: number; buffers: number }>> {
  const cdp = await page.context().newCDPSession(page);
  const on = cdp.on.bind(cdp) as unknown as (event: string, handler: (e: any) => void) => void;
  const send = cdp.send.bind(cdp) as unknown as (method: string, params?: object) => Promise<unknown>;
  const workers = new Map<string, string>();
  const pending = new Map<number, (reply: any) => void>();
  let id = 0;
  on('Target.attachedToTarget', (e) => e.targetInfo.type === 'worker' && workers.set(e.sessionId, e.targetInfo.url));
  on('Target.detachedFromTarget', (e) => workers.delete(e.sessionId));
  on('Target.receivedMessageFromTarget', (e) => {
    const reply = JSON.parse(e.message) as { id?: number };
    if (reply.id !== undefined) pending.get(reply.id)?.(reply);
  });
  await send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
  const call = (sessionId: string, method: string) =>
    new Promise<any>((resolve) => {
      const n = ++id;
      pending.set(n, resolve);
      void send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id: n, method, params: {} }) });
    });
  return async () => {
    const session = [...workers].find(([, url]) => url.includes('engine.worker'))?.[0];
    if (!session) throw new Error(`no engine worker among ${[...workers.values()].join(', ')}`);
    await call(session, 'HeapProfiler.collectGarbage');
    const usage = await call(session, 'Runtime.getHeapUsage');
    return { used: usage.result.usedSize as number, buffers: (usage.result.backingStorageSize ?? 0) as number };
  };
}
