import { expect, test, type Page } from './support/warm-context.ts';
import { MIRROR } from './support/env.ts';

const QUESTIONS = {
  sad: { type: 'noul', instructions: 'Is the dog sad?', criteria: { true: 'yes', false: 'no' } },
  place: { type: 'choice', instructions: 'Where?', criteria: { park: 'A park', home: 'At home', 'the sea': null } },
  mood: { type: 'score', instructions: 'How happy?', criteria: ['sad', 'fine', 'happy'] },
};

async function decideOn(page: Page, device: 'wasm' | 'webgpu') {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=${device}&dtype=fp32`);
  const status = await page.evaluate(() => (window as any).jev.ready);
  expect(status.device).toBe(device);
  return page.evaluate(
    (questions) => (window as any).jev.decisions.create({ model: 'jev', state: 'The little dog lost his ball in the park.', questions }),
    QUESTIONS,
  );
}

test('one decision through the facade agrees on wasm and webgpu within 1e-3', async ({ context }) => {
  const wasmPage = await context.newPage();
  const wasm = await decideOn(wasmPage, 'wasm');
  await wasmPage.close();
  const gpuPage = await context.newPage();
  const hasGpu = await gpuPage.goto('/').then(() => gpuPage.evaluate(async () => !!(await (navigator as any).gpu?.requestAdapter())));
  expect(hasGpu, 'Chromium launched with --enable-unsafe-webgpu offers a (SwiftShader) adapter').toBe(true);
  const gpu = await decideOn(gpuPage, 'webgpu');
  await gpuPage.close();

  expect(wasm.provider).toBe('wasm');
  expect(gpu.provider).toBe('webgpu');
  expect(Math.abs(wasm.answers.sad.noul - gpu.answers.sad.noul)).toBeLessThan(1e-3);
  for (const q of ['place', 'mood'] as const) {
    for (const k of Object.keys(wasm.answers[q].probabilities)) {
      expect(Math.abs(wasm.answers[q].probabilities[k] - gpu.answers[q].probabilities[k]), `${q}.${k}`).toBeLessThan(1e-3);
    }
  }
  expect(Math.abs(wasm.answers.mood.score - gpu.answers.mood.score)).toBeLessThan(1e-3);
});

test('a bad request through the facade rejects with status, code and the field', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const err = await page.evaluate(async () => {
    try {
      await (window as any).jev.decisions.create({ model: 'jev', state: 'x', questions: { q: { type: 'maybe', instructions: 'x', criteria: {} } } });
      return null;
    } catch (e: any) {
      return { status: e.status, code: e.error?.code, param: e.error?.param, isError: e instanceof Error };
    }
  });
  expect(err).toEqual({ status: 400, code: 'invalid_request', param: 'questions.q.type', isError: true });
  // the engine keeps serving
  const ok = await page.evaluate(() =>
    (window as any).jev.decisions.create({ model: 'jev', state: 'x', questions: { q: { type: 'noul', instructions: 'ok?' } } }),
  );
  expect(ok.answers.q.type).toBe('noul');
});

test('an aborted decision rejects with an AbortError', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const name = await page.evaluate(async () => {
    const c = new AbortController();
    c.abort();
    try {
      await (window as any).jev.decisions.create({ model: 'jev', state: 'x', questions: { q: { type: 'noul', instructions: 'ok?' } } }, { signal: c.signal });
      return 'resolved';
    } catch (e: any) {
      return e.name;
    }
  });
  expect(name).toBe('AbortError');
});
