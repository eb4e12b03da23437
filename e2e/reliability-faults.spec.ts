// Reliability in Chromium, part 2: faults. The engine's worker crashes (an uncaught error, or it
// closes itself), or the WebGPU device is lost: requests in flight fail with engine_unavailable
// saying the engine restarted, the supervisor starts a new worker and reloads the model (on
// wasm after a device loss), and the next request is served, without reloading the page.
import { expect, test, type Page } from '@playwright/test';
import { openApp, unhandledIn } from './reliability-support.ts';

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

test('the worker hangs (alive, looping, answering nothing): the watchdog sees it, requests in flight fail with engine_unavailable, the worker is replaced, the next is served', async ({ page }) => {
  const errors = await openApp(page);
  const before = await answers(page);
  await page.evaluate(() => ((window as any).__notReloaded = true));
  // The drill resolves once the watchdog has seen the hang (limits.hangAfterMs, 15 s by default).
  const out = await drill(page, 'hang', 'facade');
  expectFailed(out, /The engine stopped while serving this request \(the engine worker stopped answering for [\d.]+ s between forward passes \(allowed: 15 s\)\); it restarted by itself/);
  expect(out.restarts).toBe(1);
  expect(await answers(page)).toEqual(before);
  expect(await page.evaluate(() => (window as any).__notReloaded)).toBe(true);
  expect(errors).toEqual([]);
  expect(await unhandledIn(page)).toEqual([]);
});

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
