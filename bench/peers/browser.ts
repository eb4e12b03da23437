/**
 * Opens the peers page in headless Chromium: builds bench/peers/page (unless told not to), serves it
 * cross-origin isolated with the model folders, and returns the page with a typed `call` helper.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import type { PeersPage } from './page/main.ts';
import { MODEL_ROOTS, PEERS_DIST, buildPeersPage, servePeers } from './serve.ts';
import { CHROMIUM_ARGS } from '../../e2e/support/env.ts';

/** Debian's Chromium unless CHROMIUM_PATH says otherwise. */
export function chromiumPath(): string {
  const p = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium'].find((x): x is string => !!x && existsSync(x));
  if (!p) throw new Error('no Chromium found: set CHROMIUM_PATH');
  return p;
}

/** Whether a Chromium to launch is here (the browser tests run only where one is). */
export function hasChromium(): boolean {
  try {
    return !!chromiumPath();
  } catch {
    return false;
  }
}

/**
 * Launches headless Chromium. `marker`, when given, is put on the browser's command line (a switch
 * Chromium ignores) so that bench/lib/procs.ts can find its process tree and read its renderers' memory.
 */
export async function launchChromium(marker?: string): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: [...CHROMIUM_ARGS, ...(marker ? [`--jev-bench-marker=${marker}`] : [])] });
}

/** Calls `window.peers[method](...args)` in the page. */
export type PeersCall = <K extends keyof PeersPage>(method: K, ...args: Parameters<PeersPage[K]>) => Promise<Awaited<ReturnType<PeersPage[K]>>>;

/** Calls into the page; a call that takes longer than `timeoutMs` (default 15 min) rejects instead of hanging the run. */
export function peersCall(page: Page, timeoutMs = 15 * 60_000): PeersCall {
  return ((method: string, ...args: unknown[]) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`peers.${method} did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    const call = page.evaluate(
      ([m, a]) => (window as unknown as { peers: Record<string, (...x: unknown[]) => unknown> }).peers[m as string]!(...(a as unknown[])),
      [method, args] as const,
    );
    return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
  }) as PeersCall;
}

export interface PeersSession {
  page: Page;
  url: string;
  call: PeersCall;
  /** Console lines seen so far (errors and warnings of the page and its workers). */
  console: string[];
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Build the page first (default: when bench/peers/dist is missing). */
  build?: boolean;
  /** Model roots to serve under /models/ (default: <repo>/models, <repo>/vendor/models). */
  roots?: readonly string[];
  /** Echo page console output to stderr. */
  verbose?: boolean;
}

/** Builds (if needed) and serves the page, then opens it in a new page of `browser`. */
export async function openPeersPage(browser: Browser, opts: OpenOptions = {}): Promise<PeersSession> {
  if (opts.build ?? !existsSync(join(PEERS_DIST, 'index.html'))) await buildPeersPage();
  const server = await servePeers(PEERS_DIST, opts.roots ?? MODEL_ROOTS);
  const context = await browser.newContext();
  const page = await context.newPage();
  const lines: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning' || opts.verbose) lines.push(`${m.type()}: ${m.text()}`);
    if (opts.verbose) process.stderr.write(`[page ${m.type()}] ${m.text()}\n`);
  });
  page.on('pageerror', (e) => {
    lines.push(`pageerror: ${e.message}`);
    if (opts.verbose) process.stderr.write(`[pageerror] ${e.message}\n`);
  });
  page.setDefaultTimeout(0);
  await page.goto(server.url);
  await page.waitForFunction(() => !!(window as unknown as { peers?: unknown }).peers);
  const call = peersCall(page);
  const info = await call('info');
  if (!info.crossOriginIsolated) throw new Error('the peers page is not cross-origin isolated (COOP/COEP headers missing?)');
  return {
    page,
    url: server.url,
    call,
    console: lines,
    close: async () => {
      await context.close();
      await server.close();
    },
  };
}
