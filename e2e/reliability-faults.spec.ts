// Reliability in Chromium, part 2: faults. The engine's worker crashes (an uncaught error, or it
// closes itself), or the WebGPU device is lost: requests in flight fail with engine_unavailable
// saying the engine restarted, the supervisor starts a new worker and reloads the model (on
// wasm after a device loss), and the next request is served, without reloading the page.
import { expect, test, type Page } from '@playwright/test';
import { openApp, unhandledIn } from './reliability-support.ts';
import { GENERATED, MIRROR } from './support/env.ts';
import { startModelHost } from './support/model-host.ts';
import { outcomeDiff } from '../test/reliability/workload.ts';

const LONG = { model: 'jev', messages: [{ role: 'user', content: 'Tell a very long story.' }], max_tokens: 600, stop: [], temperature: 0.8, seed: 11, stream: true };

/**
 * Runs a drill while a streamed chat is in flight (through the facade, or through the service
 * worker as server-sent events) and a decision and a chat wait behind it in the engine's queue
 * (sent through the facade before the drill, so the worker holds them when it dies).
 */
function drill(page: Page, action: 'throw' | 'exit' | 'hang' | 'lose-device', via: 'facade' | 'http'): Promise<any> {
  return page.evaluate(
    async ({ action, via, LONG }) => {
      const R = (window as any).jevReliability;
      const jev = (window as any).jev;
      const describe = (e: any) => ({ name: e?.name, code: e?.error?.code ?? e?.code, status: e?.status, message: String(e?.message) });
      let chunks = 0;
      let drilled: boolean | null = null;
      const queued: Promise<unknown>[] = [];
      // Counts chunks (several may come in one read over HTTP); the drill strikes once, at the third.
      let struck = false;
      const atThirdChunk = async (n = 1) => {
        chunks += n;
        if (struck || chunks < 3) return;
        struck = true;
        queued.push(jev.decisions.create(R.PROBE_DECISION).then(() => 'served', describe));
        queued.push(jev.chat.completions.create(R.PROBE_CHAT).then(() => 'served', describe));
        drilled = action === 'lose-device' ? await jev.debug.loseDevice() : await jev.debug.crashWorker(action);
      };
      // The stream is held after 8 passes (jev.debug.hold), so it is still running at its third
      // chunk, when the drill strikes, however fast the machine; the new worker's gate is open.
      await jev.debug.hold(8);
      let streamed: unknown;
      if (via === 'facade') {
        const stream = await jev.chat.completions.create(LONG);
        streamed = await (async () => {
          for await (const _ of stream) await atThirdChunk();
          return 'completed';
        })().catch(describe);
      } else {
        const res = await fetch(R.PATHS.chat, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(LONG) });
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += value;
          const events = value.match(/data: \{"id"/g)?.length ?? 0;
          if (events > 0) await atThirdChunk(events);
        }
        const events = text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
        const last = events.at(-1);
        streamed = last && last !== '[DONE]' ? { status: res.status, ...JSON.parse(last) } : 'completed';
      }
      return { drilled, chunks, streamed, queued: await Promise.all(queued), restarts: jev.debug.restarts() };
    },
    { action, via, LONG },
  );
}

function expectFailed(out: any, message: RegExp) {
  expect(out.drilled).toBe(true);
  if (out.streamed.error) {
    // Over HTTP: the stream had begun (200), so the error is its last event.
    expect(out.streamed.status).toBe(200);
    expect(out.streamed.error).toMatchObject({ code: 'engine_unavailable', type: 'server_error', param: null });
    expect(out.streamed.error.message).toMatch(message);
  } else {
    expect(out.streamed).toMatchObject({ name: 'JevError', code: 'engine_unavailable', status: 503 });
    expect(out.streamed.message).toMatch(message);
  }
  expect(out.queued).toHaveLength(2);
  for (const q of out.queued) {
    expect(q).toMatchObject({ name: 'JevError', code: 'engine_unavailable', status: 503 });
    expect(q.message).toMatch(message);
  }
}

async function answers(page: Page) {
  return page.evaluate(async () => {
    const R = (window as any).jevReliability;
    const jev = (window as any).jev;
    const d = await jev.decisions.create(R.PROBE_DECISION);
    const c = await jev.chat.completions.create(R.PROBE_CHAT);
    const h = await fetch(R.PATHS.decisions, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(R.PROBE_DECISION) }).then((r) => r.json());
    return { decision: d.answers, chat: c.choices[0].message.content, http: h.answers, provider: d.provider };
  });
}

for (const mode of ['throw', 'exit'] as const) {
  test(`the worker crashes (${mode === 'throw' ? 'an uncaught error' : 'it closes itself'}): requests in flight fail with engine_unavailable, the engine restarts, the next is served`, async ({ page }) => {
    const errors = await openApp(page);
    const before = await answers(page);
    await page.evaluate(() => ((window as any).__notReloaded = true));

    const restarted = /The engine stopped while serving this request \(.+\); it restarted by itself/;
    const viaFacade = await drill(page, mode, 'facade');
    expectFailed(viaFacade, restarted);
    expect(viaFacade.restarts).toBe(1);
    expect(await answers(page)).toEqual(before);
    const viaHttp = await drill(page, mode, 'http');
    expectFailed(viaHttp, restarted);
    expect(viaHttp.restarts).toBe(2);

    // Served again, with the same answers, by a new worker in the same page.
    expect(await answers(page)).toEqual(before);
    expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
    const status = await page.evaluate(() => (window as any).jev.status());
    expect(status).toMatchObject({ state: 'ready', device: 'wasm', model: 'tiny-random-llama' });
    // The crash was handled by the supervisor: nothing uncaught reached the page.
    expect(errors).toEqual([]);
    expect(await unhandledIn(page)).toEqual([]);
  });
}

test('three crashes in a row (uncaught error, exit, uncaught error): each time the next request is served with the same answers', async ({ page }) => {
  const errors = await openApp(page);
  const before = await answers(page);
  for (let i = 0; i < 3; i++) {
    expect(await page.evaluate((mode) => (window as any).jev.debug.crashWorker(mode), i % 2 ? 'exit' : 'throw')).toBe(true);
    expect(await answers(page)).toEqual(before);
  }
  expect(await page.evaluate(() => (window as any).jev.debug.restarts())).toBe(3);
  expect(errors).toEqual([]);
});

test('the WebGPU device is lost: requests in flight fail with engine_unavailable, the engine restarts on wasm and answers as a wasm page does', async ({ browser }) => {
  const wasmPage = await browser.newPage();
  await openApp(wasmPage, 'wasm');
  const onWasm = await answers(wasmPage);
  await wasmPage.close();

  const page = await browser.newPage();
  const errors = await openApp(page, 'webgpu');
  const onGpu = await answers(page);
  expect(onGpu.provider).toBe('webgpu');
  await page.evaluate(() => ((window as any).__notReloaded = true));

  const out = await drill(page, 'lose-device', 'facade');
  expectFailed(out, /WebGPU device was lost.*(restarts|restarted by itself) on wasm/);
  expect(out.restarts).toBe(1);

  const after = await answers(page);
  expect(after.provider).toBe('wasm');
  expect(after).toEqual(onWasm);
  const status = await page.evaluate(() => (window as any).jev.status());
  expect(status).toMatchObject({ state: 'ready', device: 'wasm' });
  // A crash later on reloads on wasm again: WebGPU stays off for this page.
  expect(await page.evaluate(() => (window as any).jev.debug.crashWorker())).toBe(true);
  expect((await answers(page)).provider).toBe('wasm');
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
  // A page on wasm has no device to lose.
  expect(await page.evaluate(() => (window as any).jev.debug.loseDevice())).toBe(false);
});

// Concurrency under faults: 200 requests at once (10 bodies: decisions, plain and streamed chats;
// half through the facade, half through the service worker) while a fault strikes. Each one is
// answered, or refused with an error that says to send it again (503 or 429, `retriable: true` in
// the body and on the facade's rejection); none hangs (a generous
// deadline in the page), none ends twice; each answer equals the same body served alone.
const STORM_SEED = 3434;
const RETRIABLE = new Set(['503 engine_unavailable', '503 model_load_failed', '429 queue_full']);

type Strike = 'exit' | 'hang' | 'lose-device' | { loadFrom: string };

function storm(page: Page, strike: Strike, strikeAfter = 10): Promise<{ results: any[]; struck: unknown }> {
  return page.evaluate(
    ({ strike, strikeAfter, seed }) => {
      const R = (window as any).jevReliability;
      const jev = (window as any).jev;
      const act = () =>
        typeof strike === 'object'
          ? jev.load({ model: 'tiny-random-llama', host: strike.loadFrom, device: 'wasm', dtype: 'fp32' }).then(
              () => 'loaded',
              (e: any) => `${e.status} ${e.code}`,
            )
          : strike === 'lose-device'
            ? jev.debug.loseDevice()
            : jev.debug.crashWorker(strike);
      return R.storm({ jev, fetch: fetch.bind(window) }, { seed, strikeAfter, strike: act, deadlineMs: 150_000 });
    },
    { strike, strikeAfter, seed: STORM_SEED },
  );
}

const lone = (page: Page): Promise<unknown[]> => page.evaluate((seed) => (window as any).jevReliability.loneAnswers({ jev: (window as any).jev, fetch: fetch.bind(window) }, seed), STORM_SEED);

/** Checks a storm's results; returns its counts (answered, and refused by status and code), as docs/reliability.md quotes them. */
function expectStorm(results: any[], ...loneSets: unknown[][]): Record<string, number> {
  expect(results).toHaveLength(200);
  const counts: Record<string, number> = {};
  const wrong: string[] = [];
  for (const r of results) {
    const key = r.outcome === 'refused' ? `${r.status} ${r.code}` : r.outcome;
    counts[key] = (counts[key] ?? 0) + 1;
    const where = `request ${r.r} (${r.kind}${r.stream ? ', streamed' : ''}, ${r.via})`;
    if (r.ends !== 1) wrong.push(`${where}: ${r.ends} ends`);
    if (r.outcome === 'hung' || r.outcome === 'broken') wrong.push(`${where}: ${r.outcome} ${r.message ?? ''}`);
    if (r.outcome === 'refused' && !(RETRIABLE.has(key) && r.retriable)) wrong.push(`${where}: refused ${key} (${r.message}), retriable ${r.retriable}`);
    if (r.outcome === 'answered' && !loneSets.some((set) => outcomeDiff(r.answer, set[r.job]).length === 0)) {
      wrong.push(`${where}: ${JSON.stringify(r.answer)} differs from the body served alone: ${outcomeDiff(r.answer, loneSets[0]![r.job]).join('; ')}`);
    }
  }
  expect(wrong).toEqual([]);
  return counts;
}

// The worker killed (it closes itself: no error event, seen by the Web Lock), or hung (alive,
// looping, answering nothing: seen by the watchdog after limits.hangAfterMs, 15 s by default).
const STOPPED = {
  exit: /^The engine stopped while serving this request \(.+\); it restarted by itself/,
  hang: /^The engine stopped while serving this request \(the engine worker stopped answering for [\d.]+ s (between forward passes|in a forward pass of \d+ tokens?) \(allowed: [\d.]+ s\)\); it restarted by itself/,
};
for (const drill of ['exit', 'hang'] as const) {
  test(`200 concurrent requests (facade and HTTP) while the worker ${drill === 'exit' ? 'is killed' : 'hangs'}: each answered as alone or refused retriable, none hangs, none twice; the worker replaced, no page reload`, async ({ page }) => {
    test.setTimeout(240_000);
    const errors = await openApp(page);
    const alone = await lone(page);
    await page.evaluate(() => ((window as any).__notReloaded = true));
    const out = await storm(page, drill);
    expect(out.struck).toBe(true);
    const counts = expectStorm(out.results, alone);
    console.log(`storm, worker ${drill}: ${JSON.stringify(counts)}`);
    expect(counts['503 engine_unavailable'] ?? 0).toBeGreaterThan(0);
    for (const r of out.results.filter((r) => r.outcome === 'refused')) expect(r.message).toMatch(STOPPED[drill]);
    expect(await page.evaluate(() => (window as any).jev.debug.restarts())).toBe(1);
    // Served again, as alone, by the new worker, in the same page.
    expect(await lone(page)).toEqual(alone);
    expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
    expect(errors).toEqual([]);
    expect(await unhandledIn(page)).toEqual([]);
  });
}

test('200 concurrent requests (facade and HTTP) while the WebGPU device is lost: each answered as alone (on WebGPU or on wasm) or refused retriable', async ({ page }) => {
  test.setTimeout(240_000);
  const errors = await openApp(page, 'webgpu');
  const onGpu = await lone(page);
  const out = await storm(page, 'lose-device', 3);
  expect(out.struck).toBe(true);
  const onWasm = await lone(page);
  expect((await page.evaluate(() => (window as any).jev.status())).device).toBe('wasm');
  const counts = expectStorm(out.results, onGpu, onWasm);
  console.log(`storm, device lost: ${JSON.stringify(counts)}`);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});

test('200 concurrent requests (facade and HTTP) while a model load loses its network half-way: each refused retriable, none hangs; the load again serves them as alone', async ({ page }) => {
  test.setTimeout(240_000);
  const errors = await openApp(page);
  const alone = await lone(page);
  // Another host of the same files (so nothing comes from the browser's cache), whose model
  // files break off after half their bytes, as a connection lost mid-download.
  const cut = await startModelHost([GENERATED], 0, { breakOff: (path) => path.includes('/onnx/') });
  try {
    const out = await storm(page, { loadFrom: cut.url }, 0);
    expect(out.struck).toBe('503 model_load_failed');
    expect(cut.requests.some((r) => r.includes('/onnx/'))).toBe(true);
    const counts = expectStorm(out.results, alone);
    console.log(`storm, network cut mid-load: ${JSON.stringify(counts)}`);
    expect(counts['answered'] ?? 0).toBe(0);
  } finally {
    await cut.close();
  }
  // The network back (the first host): loaded again, the same bodies are served as alone.
  await page.evaluate((host) => (window as any).jev.load({ model: 'tiny-random-llama', host, device: 'wasm', dtype: 'fp32' }), MIRROR);
  expect(await lone(page)).toEqual(alone);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});
