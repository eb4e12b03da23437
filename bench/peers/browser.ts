/**
 * Opens the peers page in headless Chromium: builds bench/peers/page (unless told not to), serves it
 * cross-origin isolated with the model folders, and returns the page with a typed `call` helper.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';
import type { PeersPage } from './page/main.ts';
import { MODEL_ROOTS, PEERS_DIST, buildPeersPage, servePeers } from './serve.ts';
import { CHROMIUM_ARGS, TEST_CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';

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
 * Chromium ignores) so that scripts/machine/procs.ts can find its process tree and read its renderers' memory.
 */
export async function launchChromium(marker?: string): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: [...CHROMIUM_ARGS, ...(marker ? [`--jev-bench-marker=${marker}`] : [])] });
}

/** Headless Chromium with the browser tests' flags (TEST_CHROMIUM_ARGS: V8's wasm tiering budget raised), for the vitest files that check the peers page. */
export async function launchTestChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: TEST_CHROMIUM_ARGS });
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
  /** Build the page first (default: when `dist` has no page yet). */
  build?: boolean;
  /**
   * The folder the page is built into and served from (default bench/peers/dist, or
   * `$JEV_PEERS_DIST`). Tests that run side by side (vitest's forks) each pass one of their own.
   */
  dist?: string;
  /** Model roots to serve under /models/ (default: <repo>/models, <repo>/vendor/models). */
  roots?: readonly string[];
  /** Echo page console output to stderr. */
  verbose?: boolean;
}

/** How long the peers page may take to define `window.peers` (a few seconds here, alone or beside a CPU hog). */
const PAGE_START_MS = 120_000;

/** Builds (if needed) and serves the page, then opens it in a new page of `browser`. */
export async function openPeersPage(browser: Browser, opts: OpenOptions = {}): Promise<PeersSession> {
  const dist = opts.dist ?? PEERS_DIST;
  if (opts.build ?? !existsSync(join(dist, 'index.html'))) await buildPeersPage(dist);
  const server = await servePeers(dist, opts.roots ?? MODEL_ROOTS);
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
  // Bounded: a page that cannot start (a file missing from its folder) fails here, saying so, not at the test's timeout.
  await page
    .waitForFunction(() => !!(window as unknown as { peers?: unknown }).peers, undefined, { timeout: PAGE_START_MS })
    .catch((e: unknown) => {
      throw new Error(`the peers page (${dist}) did not start within ${PAGE_START_MS / 1000} s: ${e instanceof Error ? e.message : String(e)}\n${lines.join('\n')}`);
    });
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
