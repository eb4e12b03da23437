import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type BrowserContext, type Page } from '@playwright/test';
import { grownRenderer, peakRss, rendererRss } from '../scripts/machine/procs.ts';
import { chromiumPath, GENERATED, PREVIEW_PORT, TEST_CHROMIUM_ARGS, VENDORED } from './support/env.ts';
import { startModelHost, type ModelHost } from './support/model-host.ts';

// One engine per origin and model (docs/sharing.md): pages of one browser profile that load the
// same model share the engine of the first; the others relay their requests to it.

const BODY = {
  model: 'jev',
  state: 'My invoice was charged twice and I want a refund today.',
  questions: { urgent: { type: 'noul', instructions: 'Is it urgent?' }, mood: { type: 'score', instructions: 'How angry?', criteria: ['calm', 'annoyed', 'angry'] } },
};
const CHAT = { model: 'jev', messages: [{ role: 'user', content: 'Tell me a story.' }], max_tokens: 12, temperature: 0, stop: [] };
const EXTRACT = {
  model: 'jev',
  state: [{ type: 'text', text: 'Invoice INV-117 from Acme Ltd, total 1,234.50 EUR, due 2024-02-29.' }],
  fields: { vendor: { type: 'text', instructions: 'Who sent it?' }, total: { type: 'number', decimals: 2 }, due: { type: 'date' } },
  referenceDate: '2024-03-01',
};

let host: ModelHost;
let profile: string;
let context: BrowserContext;

test.beforeEach(async () => {
  host = await startModelHost([GENERATED, VENDORED], 0);
  profile = mkdtempSync(join(tmpdir(), 'jev-share-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    args: TEST_CHROMIUM_ARGS,
    baseURL: `http://127.0.0.1:${PREVIEW_PORT}`,
  });
});

test.afterEach(async () => {
  await context.close();
  await host.close();
  rmSync(profile, { recursive: true, force: true });
});

const appUrl = () => `/?model=tiny-random-llama&host=${encodeURIComponent(host.url)}&device=wasm&dtype=fp32`;

/** Opens the app in a new page of the profile; returns the page and the renderer its load grew. */
async function openTab(exclude: number[]): Promise<{ page: Page; renderer: number | null }> {
  const before = rendererRss(profile);
  const page = await context.newPage();
  await page.goto(appUrl());
  await page.evaluate(() => (window as any).jev.ready);
  return { page, renderer: grownRenderer(profile, before, exclude) };
}

const decide = (page: Page) => page.evaluate((body) => (window as any).jev.decisions.create(body), BODY);
const chat = (page: Page) => page.evaluate((body) => (window as any).jev.chat.completions.create(body), CHAT);
const extract = (page: Page) => page.evaluate((body) => (window as any).jev.extractions.create(body), EXTRACT);
const status = (page: Page) => page.evaluate(() => (window as any).jev.status());
/** Requests for model weights (onnx/…) the mirror served. */
const weightFetches = () => host.requests.filter((r) => r.startsWith('GET ') && r.includes('/onnx/'));
const engineWorkers = (page: Page) => page.workers().filter((w) => w.url().includes('engine.worker'));

/** The answers of a lone engine: a page of another browser profile (nothing shared with this one). */
async function loneAnswers(browserContextFactory: () => Promise<BrowserContext>) {
  const lone = await browserContextFactory();
  const page = await lone.newPage();
  await page.goto(appUrl());
  await page.evaluate(() => (window as any).jev.ready);
  const out = { decision: await decide(page), chat: await chat(page), extraction: await extract(page) };
  await lone.close();
  return out;
}

/** What an answer says (ids, times and prefix-cache usage differ from call to call). */
const said = (x: { answers?: unknown; choices?: unknown; model?: unknown }) => ({ answers: x.answers, choices: x.choices, model: x.model });

test('two and then three pages of one origin: the model is fetched and loaded once, every page answers as a lone engine does (decisions, chat, extraction), and the other pages hold no model', async ({ browser }) => {
  test.setTimeout(300_000);
  const lone = await loneAnswers(() => browser.newContext({ baseURL: `http://127.0.0.1:${PREVIEW_PORT}` }));

  const first = await openTab([]);
  const fetched = weightFetches();
  expect(fetched.length).toBeGreaterThan(0);
  const second = await openTab(first.renderer === null ? [] : [first.renderer]);
  const third = await openTab([first.renderer, second.renderer].filter((p): p is number => p !== null));
  const pages = [first.page, second.page, third.page];

  // Fetched once (the mirror's log), loaded once (one engine worker; its counters serve all).
  expect(weightFetches()).toEqual(fetched);
  expect(engineWorkers(first.page)).toHaveLength(1);
  expect(engineWorkers(second.page)).toHaveLength(0);
  expect(engineWorkers(third.page)).toHaveLength(0);
  const statuses = await Promise.all(pages.map(status));
  const hostTab = statuses[0].sharing.tab;
  expect(statuses.map((s) => s.sharing.host)).toEqual([hostTab, hostTab, hostTab]);
  expect(statuses.map((s) => s.sharing.hosting)).toEqual([true, false, false]);
  expect(statuses.map((s) => s.sharing.tabs)).toEqual([3, 3, 3]);
  expect(new Set(statuses.map((s) => s.sharing.tab)).size).toBe(3);
  // The Model panel says which tab hosts and how many share (re-read every 2 s).
  await expect(first.page.getByTestId('sharing')).toHaveAttribute('data-hosting', 'true');
  await expect(first.page.getByTestId('sharing')).toContainText('This tab hosts the engine; 2 other tabs use it.', { timeout: 10_000 });
  await expect(third.page.getByTestId('sharing')).toHaveAttribute('data-hosting', 'false');
  await expect(third.page.getByTestId('sharing')).toContainText(`Served by the engine of another tab (${hostTab}); 3 tabs share it.`, { timeout: 10_000 });

  // The same answers as a lone engine's, through the methods and through each page's HTTP surface.
  for (const page of pages) {
    expect(said(await decide(page))).toEqual(said(lone.decision));
    expect(said(await chat(page))).toEqual(said(lone.chat));
    // An extraction relayed to the host's engine: the same values, probabilities and sources.
    const extraction = await extract(page);
    expect(Object.keys(extraction.answers)).toEqual(['vendor', 'total', 'due']);
    expect(said(extraction)).toEqual(said(lone.extraction));
    const viaFetch = await page.evaluate(async (body) => {
      const r = await (window as any).jev.fetch('/inference/jev/api/alpha/decisions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      return r.json();
    }, BODY);
    expect(said(viaFetch)).toEqual(said(lone.decision));
  }
  // Every request above was served by the host's engine: its counters saw them all.
  const after = await status(third.page);
  expect(after.counters.forwardPasses).toBeGreaterThan(statuses[0].counters.forwardPasses);
  expect((await status(first.page)).counters).toEqual(after.counters);

  // The second page's renderer holds no copy of the model: its peak resident set is below the
  // first's by more than the model's bytes (a second engine would cost as much as the first).
  expect(first.renderer).not.toBeNull();
  expect(second.renderer).not.toBeNull();
  expect(second.renderer).not.toBe(first.renderer);
  const peakFirst = peakRss(first.renderer!)!;
  const peakSecond = peakRss(second.renderer!)!;
  expect(peakFirst - peakSecond).toBeGreaterThan(after.memory.modelBytes);
});

test('the hosting page closes in the middle of a queue: every request is answered or refused as retriable, none hangs, and the next page serves from the cache', async ({ browser }) => {
  test.setTimeout(300_000);
  const lone = await loneAnswers(() => browser.newContext({ baseURL: `http://127.0.0.1:${PREVIEW_PORT}` }));
  const first = await openTab([]);
  const second = await openTab([]);
  const third = await openTab([]);
  const fetched = weightFetches();
  const secondTab = (await status(second.page)).sharing.tab;

  // The host holds its engine after a few passes: a stream from the second page has begun, and
  // requests from the second and third pages wait behind it when the host closes.
  await first.page.evaluate(() => (window as any).jev.debug.hold(3));
  await second.page.evaluate((body) => {
    const w = window as any;
    w.__chunks = 0;
    w.__stream = (async () => {
      try {
        for await (const chunk of await w.jev.chat.completions.create({ ...body, max_tokens: 40, stream: true })) if (chunk) w.__chunks += 1;
        return { ended: 'done' };
      } catch (e: any) {
        return { ended: 'error', status: e.status, code: e.error?.code, retriable: e.error?.retriable };
      }
    })();
  }, CHAT);
  await second.page.waitForFunction(() => (window as any).__chunks > 0);
  const queue = (page: Page) =>
    page.evaluate(
      ({ body, chatBody }) => {
        const w = window as any;
        const settle = (p: Promise<unknown>) => p.then((value) => ({ ok: true, value }), (e: any) => ({ ok: false, status: e.status, code: e.error?.code, retriable: e.error?.retriable }));
        w.__queue = Promise.all([settle(w.jev.decisions.create(body)), settle(w.jev.chat.completions.create(chatBody)), settle(w.jev.decisions.create(body))]);
      },
      { body: BODY, chatBody: CHAT },
    );
  await queue(second.page);
  await queue(third.page);
  await first.page.close();

  const stream = await second.page.evaluate(() => (window as any).__stream);
  expect(stream).toEqual({ ended: 'error', status: 503, code: 'engine_unavailable', retriable: true });
  for (const page of [second.page, third.page]) {
    const settled = await page.evaluate(() => (window as any).__queue);
    expect(settled).toHaveLength(3);
    for (const s of settled) expect(s.ok || (s.code === 'engine_unavailable' && s.retriable === true), JSON.stringify(s)).toBe(true);
    // Not begun, they were sent again to the new host, and answered as a lone engine answers.
    expect(settled.map((s: { ok: boolean }) => s.ok)).toEqual([true, true, true]);
    expect(said(settled[0].value)).toEqual(said(lone.decision));
    expect(said(settled[1].value)).toEqual(said(lone.chat));
    expect(said(settled[2].value)).toEqual(said(lone.decision));
  }

  // The page that asked first took over, loaded from the cache (no weight fetched again), and serves.
  const statuses = await Promise.all([status(second.page), status(third.page)]);
  expect(statuses.map((s) => s.sharing.host)).toEqual([secondTab, secondTab]);
  expect(statuses.map((s) => s.sharing.tabs)).toEqual([2, 2]);
  expect(engineWorkers(second.page)).toHaveLength(1);
  expect(engineWorkers(third.page)).toHaveLength(0);
  expect(weightFetches()).toEqual(fetched);
  expect(said(await decide(third.page))).toEqual(said(lone.decision));
});
