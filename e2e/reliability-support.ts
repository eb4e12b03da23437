import { existsSync, mkdirSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Page } from '@playwright/test';
import { build } from 'vite';
import { MIRROR, REPO } from './support/env.ts';

const HARNESS = resolve(REPO, 'test/reliability/browser-harness.ts');
export const HARNESS_BUNDLE = resolve(REPO, 'node_modules/.cache/jev-e2e/reliability-harness.js');

/** Bundles the reliability workload (generator of malformed requests, mixed jobs) for the page. */
export async function buildHarness(): Promise<string> {
  const sources = ['browser-harness.ts', 'malformed.ts', 'workload.ts'].map((f) => statSync(resolve(REPO, 'test/reliability', f)).mtimeMs);
  if (existsSync(HARNESS_BUNDLE) && statSync(HARNESS_BUNDLE).mtimeMs > Math.max(...sources)) return HARNESS_BUNDLE;
  mkdirSync(resolve(HARNESS_BUNDLE, '..'), { recursive: true });
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      outDir: resolve(HARNESS_BUNDLE, '..'),
      emptyOutDir: false,
      lib: { entry: HARNESS, formats: ['iife'], name: 'jevReliabilityHarness', fileName: () => 'reliability-harness.js' },
      minify: false,
    },
  });
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
