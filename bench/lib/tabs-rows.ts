/**
 * The `tabs` rows (docs/sharing.md, CONTRACT §1): the resident memory of all renderers of one
 * browser profile with 1, 2 and 4 tabs of the library's client (bench/page/tabs.html) on one
 * model, each tab having answered one decision, with `share: 'origin'` (one engine, hosted by the
 * first tab, the others relaying) against the same number of tabs each running its own engine
 * (`share: 'tab'`). Each configuration runs in a fresh profile (a fresh Chromium).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../scripts/machine/chromium.ts';
import type { ModelHost } from '../../e2e/support/model-host.ts';
import { chromiumPath } from '../peers/browser.ts';
import { browserTree } from '../../scripts/machine/procs.ts';
import type { TabsResult } from './schema.ts';

export interface TabsPlan {
  model: string;
  dtype: string;
  counts: number[];
}

/** The pause between the memory-pressure signal and the reading. */
const SETTLE_MS = 3000;

const DECISION = { model: 'jev', state: 'The parcel arrived two weeks late and the box was crushed.', questions: { late: { type: 'noul', instructions: 'Was it late?' } } };

/**
 * A process's proportional set size (Linux smaps_rollup): its private pages, and each shared page
 * divided among the processes that map it. Renderers share Chromium's code and fonts: their RSS
 * counts those once per renderer, their PSS once in all. null where it cannot be read.
 */
function pss(pid: number): number | null {
  try {
    const kb = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : null;
  } catch {
    return null;
  }
}

interface Measured {
  rss: number;
  /** The sum of the renderers' proportional set sizes (null where one could not be read). */
  pss: number | null;
  /** Each renderer's resident set, largest first (the host's renderer first where shared). */
  renderers: number[];
  /** Tabs the engine says it serves (origin), else null. */
  served: number | null;
  engines: number;
}

/**
 * `n` tabs of one fresh profile, each having answered a decision: `origin` shares one engine, `tab`
 * gives each its own, `blank` is the control (the first tab as `origin`, the others a page of the
 * same origin without the library, bench/page/blank.html).
 */
async function openTabs(site: string, mirror: ModelHost, plan: TabsPlan, share: 'origin' | 'tab' | 'blank', n: number, log: (...a: unknown[]) => void): Promise<Measured> {
  const profile = mkdtempSync(join(tmpdir(), 'jev-bench-tabs-'));
  const ctx: BrowserContext = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    const url = `${site}/tabs.html?model=${encodeURIComponent(plan.model)}&host=${encodeURIComponent(mirror.url)}&dtype=${plan.dtype}&share=${share === 'tab' ? 'tab' : 'origin'}`;
    const pages: Page[] = [];
    for (let i = 0; i < n; i++) {
      const page = i === 0 && ctx.pages()[0] ? ctx.pages()[0]! : await ctx.newPage();
      page.setDefaultTimeout(0);
      page.on('pageerror', (e) => log('tab page error:', e.message));
      if (share === 'blank' && i > 0) {
        await page.goto(`${site}/blank.html`);
        continue;
      }
      await page.goto(url);
      await page.waitForFunction(() => (window as unknown as { jevTab?: unknown }).jevTab);
      await page.evaluate(() => (window as unknown as { jevTab: { ready: Promise<unknown> } }).jevTab.ready);
      await page.evaluate((body) => (window as unknown as { jevTab: { decisions: { create(b: unknown): Promise<unknown> } } }).jevTab.decisions.create(body), DECISION);
      pages.push(page);
    }
    const last = await pages.at(-1)!.evaluate(() => (window as unknown as { jevTab: { status(): Promise<{ sharing?: { tabs: number } }> } }).jevTab.status());
    const engines = pages.reduce((s, p) => s + p.workers().filter((w) => w.url().includes('engine.worker')).length, 0);
    // Every configuration read alike, settled: a critical memory-pressure signal and a full GC in
    // every tab, then a pause, so that a tab measured right after its decision (the last one) is
    // not counted with garbage the others have had time to free.
    for (const page of ctx.pages()) {
      const cdp = await ctx.newCDPSession(page);
      await cdp.send('Memory.simulatePressureNotification', { level: 'critical' });
      await cdp.send('HeapProfiler.collectGarbage');
      await cdp.detach();
    }
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const procs = browserTree(profile).filter((p) => p.type === 'renderer');
    const renderers = procs.map((p) => p.rss).sort((a, b) => b - a);
    const pssEach = procs.map((p) => pss(p.pid));
    const pssSum = pssEach.every((x) => x !== null) ? pssEach.reduce((s: number, x) => s + x!, 0) : null;
    return { rss: renderers.reduce((s, x) => s + x, 0), pss: pssSum, renderers, served: last.sharing?.tabs ?? null, engines };
  } finally {
    await ctx.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

export async function measureTabs(plan: TabsPlan, site: string, mirror: ModelHost, log: (...a: unknown[]) => void): Promise<TabsResult[]> {
  const rows: TabsResult[] = [];
  let one: number | null = null;
  let onePss: number | null = null;
  for (const n of plan.counts) {
    const shared = await openTabs(site, mirror, plan, 'origin', n, log);
    const own = await openTabs(site, mirror, plan, 'tab', n, log);
    const control = n > 1 ? await openTabs(site, mirror, plan, 'blank', n, log) : null;
    if (n === 1 || one === null) [one, onePss] = [shared.rss, shared.pss];
    const row: TabsResult = {
      model: plan.model,
      device: 'wasm',
      dtype: plan.dtype,
      tabs: n,
      renderers_rss_bytes: shared.rss,
      one_tab_rss_bytes: one,
      ratio_to_one_tab: shared.rss / one,
      independent_rss_bytes: own.rss,
      independent_ratio_to_one_tab: own.rss / one,
      engines: shared.engines,
      independent_engines: own.engines,
      served_tabs: shared.served,
      renderers_pss_bytes: shared.pss,
      independent_pss_bytes: own.pss,
      pss_ratio_to_one_tab: shared.pss !== null && onePss ? shared.pss / onePss : null,
      renderer_rss_bytes: shared.renderers,
      independent_renderer_rss_bytes: own.renderers,
      ...(control && {
        blank_control: {
          rss_bytes: control.rss,
          pss_bytes: control.pss,
          ratio_to_one_tab: control.rss / one,
          pss_ratio_to_one_tab: control.pss !== null && onePss ? control.pss / onePss : null,
          relay_over_blank_bytes: shared.rss - control.rss,
          relay_over_blank_pss_bytes: control.pss !== null && shared.pss !== null ? shared.pss - control.pss : null,
        },
      }),
    };
    log(
      `tabs ${plan.model} ${plan.dtype} ×${n}: shared ${(shared.rss / 2 ** 20).toFixed(0)} MiB (${row.ratio_to_one_tab.toFixed(2)}× one tab; PSS ${row.pss_ratio_to_one_tab?.toFixed(2)}×; ${shared.engines} engine, ` +
        `serving ${shared.served} tabs; renderers ${shared.renderers.map((x) => (x / 2 ** 20).toFixed(0)).join(' + ')} MiB), independent ${(own.rss / 2 ** 20).toFixed(0)} MiB (${row.independent_ratio_to_one_tab.toFixed(2)}×; ${own.engines} engines)` +
        (control ? `; control, one engine tab + ${n - 1} without the library: ${(control.rss / 2 ** 20).toFixed(0)} MiB (${(control.rss / one).toFixed(2)}×; renderers ${control.renderers.map((x) => (x / 2 ** 20).toFixed(0)).join(' + ')} MiB)` : ''),
    );
    rows.push(row);
  }
  return rows;
}
