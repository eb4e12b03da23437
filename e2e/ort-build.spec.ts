import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, expect, test, type Browser } from '@playwright/test';
import { chromiumPath, DIST, MIRROR, TEST_CHROMIUM_ARGS } from './support/env.ts';
import { startStatic } from './support/static-server.ts';
import { ORT_BUILDS } from '../src/engine/runtime/ort-build.ts';

// onnxruntime-web's build (src/engine/runtime/ort-build.ts): on wasm its wasm-only build (`cpu`); on WebGPU
// JSPI where the browser has it, asyncify where it does not. Chromium has JSPI and no switch turns it off,
// so the browser without it is made by serving the built app with `delete WebAssembly.Suspending` at the
// top of the engine worker's script. The page parameter `ortBuild=cpu|jspi|asyncify` forces one
// (docs/threads.md); `status().ortBuild` names it.
// `threads=N` (createClient({ threads })) sets onnxruntime-web's wasm threads; `status().threads` says them.

const QUERY = `/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`;
const QUESTIONS = {
  sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: 'yes', false: 'no' } },
  place: { type: 'choice', instructions: 'Where?', criteria: { park: 'A park', home: 'At home', 'the sea': null } },
};

async function decide(browser: Browser, withoutJspi: boolean, extraQuery = '') {
  const site = await startStatic(DIST);
  const worker = readdirSync(join(DIST, 'assets')).find((f) => /^engine\.worker-.*\.js$/.test(f));
  expect(worker, 'the built engine worker').toBeTruthy();
  if (withoutJspi) site.override(`/assets/${worker}`, (body) => `delete WebAssembly.Suspending;\n${body}`);
  const context = await browser.newContext({ serviceWorkers: 'block' });
  const seen: string[] = [];
  context.on('request', (r) => seen.push(r.url()));
  try {
    const page = await context.newPage();
    await page.goto(`${site.url}${QUERY}${extraQuery}`);
    await page.evaluate(() => (window as any).jev.ready);
    const decision = await page.evaluate(
      (questions) => (window as any).jev.decisions.create({ model: 'jev', state: 'The little dog lost his ball in the park.', questions }),
      QUESTIONS,
    );
    // onnxruntime's files, once each (its threads import the .mjs again).
    const ort = [...new Set(seen.filter((u) => u.includes('/ort/')).map((u) => new URL(u).pathname.replace(/^.*\//, '')))];
    const status = await page.evaluate(() => (window as any).jev.status());
    const cores = await page.evaluate(() => (crossOriginIsolated ? navigator.hardwareConcurrency : 1));
    return { decision, ort, ortBuild: status.ortBuild as string | undefined, threads: status.threads as number, cores };
  } finally {
    await context.close();
    await site.close();
  }
}

test('a wasm load runs the wasm-only build, with JSPI or without; JSPI and asyncify where asked: the same answers from all three', async ({ browser }) => {
  const cpu = await decide(browser, false);
  const cpuWithoutJspi = await decide(browser, true);
  const jspi = await decide(browser, false, '&ortBuild=jspi');
  const asyncify = await decide(browser, true, '&ortBuild=jspi');
  expect(cpu.ort.sort()).toEqual([ORT_BUILDS.cpu.mjs, ORT_BUILDS.cpu.wasm]);
  expect(cpuWithoutJspi.ort.sort()).toEqual([ORT_BUILDS.cpu.mjs, ORT_BUILDS.cpu.wasm]);
  expect(jspi.ort.sort()).toEqual([ORT_BUILDS.jspi.mjs, ORT_BUILDS.jspi.wasm]);
  expect(asyncify.ort.sort()).toEqual([ORT_BUILDS.asyncify.mjs, ORT_BUILDS.asyncify.wasm]);
  expect([cpu.ortBuild, cpuWithoutJspi.ortBuild, jspi.ortBuild, asyncify.ortBuild]).toEqual(['cpu', 'cpu', 'jspi', 'asyncify']);
  // One source, three builds (wasm only; two ways of waiting on promises): the same numbers.
  for (const other of [cpuWithoutJspi, jspi, asyncify]) {
    expect(Math.abs(cpu.decision.answers.sad.noul - other.decision.answers.sad.noul)).toBeLessThan(1e-6);
    for (const k of Object.keys(cpu.decision.answers.place.probabilities)) {
      expect(Math.abs(cpu.decision.answers.place.probabilities[k] - other.decision.answers.place.probabilities[k]), k).toBeLessThan(1e-6);
    }
  }
});

test("WebGPU asked of a client whose worker runs the wasm-only build: a fresh worker loads it on the WebGPU build, and it answers", async ({ browser }) => {
  const site = await startStatic(DIST);
  const context = await browser.newContext({ serviceWorkers: 'block' });
  // The tab's own engine, not one shared with the origin (createClient shares only where the page has
  // Web Locks): a shared engine starts a new worker for every other model or device anyway, while this
  // one keeps its worker across loads, so the worker's build is what decides.
  await context.addInitScript(() => Object.defineProperty(Navigator.prototype, 'locks', { get: () => undefined }));
  const seen: string[] = [];
  context.on('request', (r) => seen.push(r.url()));
  try {
    const page = await context.newPage();
    await page.goto(`${site.url}${QUERY}`);
    await page.evaluate(() => (window as any).jev.ready);
    const before = await page.evaluate(() => (window as any).jev.status());
    expect([before.device, before.ortBuild]).toEqual(['wasm', 'cpu']);
    const webgpu = await page.evaluate(async (host) => {
      const jev = (window as any).jev;
      if (!(await (navigator as any).gpu?.requestAdapter())) return null;
      const status = await jev.load({ model: 'tiny-random-llama', host, device: 'webgpu', dtype: 'fp32' });
      const decision = await jev.decisions.create({ model: 'jev', state: 'The little dog lost his ball in the park.', questions: { sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: 'yes', false: 'no' } } } });
      return { device: status.device, ortBuild: status.ortBuild, noul: decision.answers.sad.noul, restarts: jev.debug?.restarts?.() ?? null };
    }, MIRROR);
    test.skip(webgpu === null, 'this Chromium offers no WebGPU adapter');
    expect(webgpu).toMatchObject({ device: 'webgpu', ortBuild: 'jspi', restarts: 0 });
    expect(webgpu!.noul).toBeGreaterThan(0);
    expect(webgpu!.noul).toBeLessThan(1);
    // The WebGPU build's files were fetched for the second worker.
    const ort = new Set(seen.filter((u) => u.includes('/ort/')).map((u) => new URL(u).pathname.replace(/^.*\//, '')));
    expect(ort.has(ORT_BUILDS.jspi.wasm)).toBe(true);
    // And wasm again, on the new worker's build (the WebGPU build runs wasm too): no further worker.
    const back = await page.evaluate((host) => (window as any).jev.load({ model: 'tiny-random-llama', host, device: 'wasm', dtype: 'fp32' }), MIRROR);
    expect([back.device, back.ortBuild]).toEqual(['wasm', 'jspi']);
  } finally {
    await context.close();
    await site.close();
  }
});

test('?ortBuild= forces a build: asyncify where JSPI exists, and JSPI asked without it loads asyncify', async ({ browser }) => {
  const forced = await decide(browser, false, '&ortBuild=asyncify');
  expect(forced.ort.sort()).toEqual([ORT_BUILDS.asyncify.mjs, ORT_BUILDS.asyncify.wasm]);
  expect(forced.ortBuild).toBe('asyncify');
  const missing = await decide(browser, true, '&ortBuild=jspi');
  expect(missing.ort.sort()).toEqual([ORT_BUILDS.asyncify.mjs, ORT_BUILDS.asyncify.wasm]);
  expect(missing.ortBuild).toBe('asyncify');
});

test('?threads=1 runs onnxruntime-web on one thread (status().threads), with the answers of the default threads', async ({ browser }) => {
  const one = await decide(browser, false, '&threads=1');
  const all = await decide(browser, false);
  expect(all.cores, 'the page is cross-origin isolated: its default is a thread per core').toBeGreaterThan(1);
  expect(one.threads).toBe(1);
  expect(all.threads).toBe(all.cores);
  expect(Math.abs(one.decision.answers.sad.noul - all.decision.answers.sad.noul)).toBeLessThan(1e-5);
});

test("a later page load compiles onnxruntime's wasm from the browser's stored copy: the host is not asked again (no 304)", async () => {
  // The static server asks for revalidation (no-cache + ETag), as most hosts do; the shipped names carry
  // their revision (ORT_REVISION), so the engine fetches them with cache: 'force-cache' (runtime-fetch.ts),
  // and Chromium then reuses the code it compiled (docs/benchmarks.md, "Where a load goes"). A profile on
  // disk: an in-memory HTTP cache does not keep a 17 MB file.
  const site = await startStatic(DIST);
  const profile = mkdtempSync(join(tmpdir(), 'jev-ort-cache-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath(), args: TEST_CHROMIUM_ARGS, serviceWorkers: 'block' });
  try {
    for (let visit = 0; visit < 2; visit++) {
      const page = await context.newPage();
      await page.goto(`${site.url}${QUERY}&ortBuild=jspi`);
      await page.evaluate(() => (window as any).jev.ready);
      await page.close();
    }
    expect(site.hits(`/ort/${ORT_BUILDS.jspi.wasm}`)).toBe(1);
    // The page itself is revalidated as before: only the runtime's files are taken as stored.
    expect(site.hits('/')).toBe(2);
  } finally {
    await context.close();
    await site.close();
    rmSync(profile, { recursive: true, force: true });
  }
});
