import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Browser } from '@playwright/test';
import { DIST, MIRROR } from './support/env.ts';
import { startStatic } from './support/static-server.ts';
import { ORT_BUILDS } from '../src/engine/runtime/ort-build.ts';

// onnxruntime-web's build (src/engine/runtime/ort-build.ts): JSPI where the browser has it, asyncify where
// it does not. Chromium has JSPI and no switch turns it off, so the browser without it is made by
// serving the built app with `delete WebAssembly.Suspending` at the top of the engine worker's script.
// The page parameter `ortBuild=jspi|asyncify` forces one (docs/threads.md); `status().ortBuild` names it.
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

test('without JSPI the engine runs the asyncify build, with it the JSPI build: the same answers', async ({ browser }) => {
  const jspi = await decide(browser, false);
  const asyncify = await decide(browser, true);
  expect(jspi.ort.sort()).toEqual([ORT_BUILDS.jspi.mjs, ORT_BUILDS.jspi.wasm]);
  expect(asyncify.ort.sort()).toEqual([ORT_BUILDS.asyncify.mjs, ORT_BUILDS.asyncify.wasm]);
  expect([jspi.ortBuild, asyncify.ortBuild]).toEqual(['jspi', 'asyncify']);
  // One source, two ways of waiting on promises: the same numbers.
  expect(Math.abs(jspi.decision.answers.sad.noul - asyncify.decision.answers.sad.noul)).toBeLessThan(1e-6);
  for (const k of Object.keys(jspi.decision.answers.place.probabilities)) {
    expect(Math.abs(jspi.decision.answers.place.probabilities[k] - asyncify.decision.answers.place.probabilities[k]), k).toBeLessThan(1e-6);
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
