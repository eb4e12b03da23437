import { expect, test, type Page } from '@playwright/test';
import { EXTRA_PORT, DIST, MIRROR } from './support/env.ts';
import { startStatic } from './support/static-server.ts';
import { ORT_BUILDS, type OrtBuild } from '../src/engine/runtime/ort-build.ts';

const URL_ = `/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`;
const DECISION = {
  model: 'jev',
  state: 'The train was late again and I missed my meeting.',
  questions: {
    late: { type: 'noul', instructions: 'Was something late?' },
    mood: { type: 'score', instructions: 'How annoyed?', criteria: ['calm', 'annoyed', 'furious'] },
  },
};

async function ready(page: Page) {
  // `?.`: while a reload is under way the predicate may run in a document that is not the app's
  // yet (no navigator.serviceWorker there); it then waits instead of failing.
  await page.waitForLoadState('load');
  await page.waitForFunction(() => !!navigator.serviceWorker?.controller && !!(window as any).jev);
  return page.evaluate(() => (window as any).jev.ready);
}

async function decideAndStream(page: Page) {
  return page.evaluate(async (decision) => {
    const d = await fetch('/inference/jev/api/alpha/decisions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(decision),
    }).then((r) => r.json());
    const res = await fetch('/v1/chat/completions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'jev', messages: [{ role: 'user', content: 'Hello there.' }], temperature: 0, max_tokens: 12, stream: true }),
    });
    const text = await res.text();
    return { decision: d, events: text.split('\n\n').filter(Boolean) };
  }, DECISION);
}

test('after the first load, the page, a decision and a streamed chat all work offline', async ({ context, page }) => {
  await page.goto(URL_);
  await ready(page);
  const online = await decideAndStream(page);
  expect(online.decision.answers.late.type).toBe('noul');
  // Let the service worker finish precaching (it is active once installed).
  await page.evaluate(() => navigator.serviceWorker.ready);

  await context.setOffline(true);
  await page.reload();
  const status = await ready(page);
  expect(status.state).toBe('ready');
  // The shell from the service worker's precache is cross-origin isolated too: wasm threads offline.
  const isolation = await page.evaluate(() => ({ isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency }));
  expect(isolation.isolated).toBe(true);
  expect(status.threads).toBe(isolation.cores);
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  const offline = await decideAndStream(page);
  expect(offline.decision.answers).toEqual(online.decision.answers);
  expect(offline.events.at(-1)).toBe('data: [DONE]');
  expect(offline.events.length).toBeGreaterThan(3);
  // Temperature 0: the same text, chunk for chunk.
  const text = (events: string[]) => events.slice(0, -1).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '');
  expect(text(offline.events)).toEqual(text(online.events));
});

test('a whole session sends requests only to the origin and the model host', async ({ context, page }) => {
  const seen: string[] = [];
  context.on('request', (r) => seen.push(r.url()));
  page.on('request', (r) => seen.push(r.url()));
  await page.goto(URL_);
  await ready(page);
  await decideAndStream(page);
  await page.evaluate(async () => {
    const jev = (window as any).jev;
    await jev.decisions.create({ model: 'jev', state: 'x', questions: { q: { type: 'noul', instructions: 'ok?' } } });
    for await (const _ of await jev.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, stream: true })) void _;
  });
  await page.reload();
  await ready(page);
  const origins = new Set(seen.map((u) => new URL(u).origin));
  const page_ = new URL(page.url()).origin;
  expect([...origins].filter((o) => o !== page_ && o !== MIRROR && o !== 'null')).toEqual([]);
  expect(seen.some((u) => u.startsWith(MIRROR))).toBe(true);
  expect(seen.some((u) => u.includes('/ort/ort-wasm'))).toBe(true);
  // onnxruntime-web's builds this browser runs: the wasm-only one (this page's wasm load) and, for WebGPU
  // loads, JSPI where this browser has it, else asyncify (both precached, for offline use on either
  // device); the third is never fetched, not even by the precache.
  const jspi = await page.evaluate(() => typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function');
  const [gpu, other] = jspi ? ['jspi', 'asyncify'] : ['asyncify', 'jspi'];
  expect(await page.evaluate(() => (window as any).jev.status().then((s: { ortBuild?: string }) => s.ortBuild))).toBe('cpu');
  for (const used of ['cpu', gpu] as OrtBuild[]) expect(seen.some((u) => u.includes(`/ort/${ORT_BUILDS[used].wasm}`)), used).toBe(true);
  expect(seen.filter((u) => u.includes(`/ort/ort-wasm-simd-threaded.${other}.`))).toEqual([]);
});

test('a corrupted cached model file is detected and fetched again on the next load', async ({ page }) => {
  await page.goto(URL_);
  await ready(page);
  const before = await page.evaluate(() => (window as any).jev.decisions.create({ model: 'jev', state: 'abc', questions: { q: { type: 'noul', instructions: 'ok?' } } }));
  // Flip bytes in the cached ONNX file, keeping its recorded size and hash.
  const corrupted = await page.evaluate(async () => {
    const cache = await caches.open('transformers-cache');
    const key = (await cache.keys()).map((r) => r.url).find((u) => u.endsWith('/onnx/model.onnx'))!;
    const hit = (await cache.match(key))!;
    const bytes = new Uint8Array(await hit.arrayBuffer());
    for (let i = bytes.length - 4096; i < bytes.length - 2048; i++) bytes[i] = bytes[i]! ^ 0xff;
    await cache.put(key, new Response(bytes, { headers: hit.headers }));
    // The rewrite kept in the OPFS holds all the session reads of this file (rewritten-graphs.ts), so
    // a return visit would not read the file at all (e2e/kept-rewrites.spec.ts); without it, as when
    // it is lost or damaged, the load reads the file and checks it.
    await (await navigator.storage.getDirectory()).removeEntry('jev-kept', { recursive: true });
    return key;
  });
  const fetched: string[] = [];
  page.on('request', (r) => fetched.push(r.url()));
  await page.reload();
  await ready(page);
  expect(fetched.filter((u) => u === corrupted).length).toBeGreaterThanOrEqual(1);
  const after = await page.evaluate(() => (window as any).jev.decisions.create({ model: 'jev', state: 'abc', questions: { q: { type: 'noul', instructions: 'ok?' } } }));
  expect(after.answers).toEqual(before.answers);
  // The repaired entry verifies again: a third load fetches nothing from the model host.
  const third: string[] = [];
  page.on('request', (r) => third.push(r.url()));
  await page.reload();
  await ready(page);
  expect(third.filter((u) => u.startsWith(MIRROR) && u.endsWith('.onnx'))).toEqual([]);
});

test('a new version is announced, and applied only when the page accepts it', async ({ page }) => {
  const site = await startStatic(DIST, EXTRA_PORT.staticSite);
  try {
    await page.goto(`${site.url}${URL_}`);
    await ready(page);
    await page.evaluate(() => {
      window.addEventListener('jev-update', (e) => Object.assign(window, { applyUpdate: (e as CustomEvent).detail }), { once: true });
    });
    // Publish a new build: the service worker script changes.
    site.override('/sw.js', (body) => `${body}\n// a new version\n`);
    await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => r!.update()));
    await page.waitForFunction(() => typeof (window as any).applyUpdate === 'function');
    // Announced, not applied: the old worker still controls the page, the new one waits.
    expect(await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => !!r!.waiting))).toBe(true);
    const oldWorker = await page.evaluate(() => navigator.serviceWorker.controller!.scriptURL);
    // Applying reloads the page: wait for a new document (the marker is gone), then for the app.
    await page.evaluate(() => Object.assign(window, { __beforeUpdate: true }));
    await page.evaluate(() => (window as any).applyUpdate());
    await page.waitForFunction(() => !(window as any).__beforeUpdate && document.readyState === 'complete');
    await ready(page);
    const after = await page.evaluate(() => navigator.serviceWorker.getRegistration().then((r) => ({ waiting: !!r!.waiting, active: !!r!.active })));
    expect(after).toEqual({ waiting: false, active: true });
    expect(oldWorker).toContain('/sw.js');
  } finally {
    await site.close();
  }
});
