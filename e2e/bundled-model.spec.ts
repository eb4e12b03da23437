import { expect, test, type Page } from '@playwright/test';

/**
 * The model the app serves itself (build/bundled-models.ts): on a machine that cannot reach the
 * hub, the page says so, offers it in one click, and it answers a chat and a decision; the query
 * parameters load it directly. The model panel stays within its own width at desktop and phone
 * widths, long URLs in its messages included, and shows the engine's memory (`status().memory`).
 */
const BUNDLED_ONNX_BYTES = 3_683_060; // vendor/models/TinyStories-656K/onnx/model.onnx

/** Every request to the hub fails as on a machine without a network (the default model lives there). */
async function hubUnreachable(page: Page): Promise<string[]> {
  const tried: string[] = [];
  await page.context().route('https://huggingface.co/**', (route) => {
    tried.push(route.request().url());
    return route.abort('internetdisconnected');
  });
  return tried;
}

/**
 * Elements of the model panel that reach past its left or right edge (zero-sized ones aside), and
 * those whose text runs past their own box (a box keeps its width while an unbroken URL overflows
 * it), except where the box scrolls or clips on purpose.
 */
async function overflowing(page: Page): Promise<string[]> {
  return page.locator('.model-panel').evaluate((panel) => {
    const edge = panel.getBoundingClientRect();
    const out: string[] = [];
    for (const el of [panel, ...panel.querySelectorAll('*')]) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const clips = getComputedStyle(el).overflowX !== 'visible';
      const spills = !clips && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0;
      if (spills || r.right > edge.right + 0.5 || r.left < edge.left - 0.5) out.push(`${el.tagName.toLowerCase()}.${el.className} (${Math.round(r.left)}–${Math.round(r.right)} of ${Math.round(edge.left)}–${Math.round(edge.right)}): ${(el.textContent ?? '').slice(0, 60)}`);
    }
    return out;
  });
}

for (const viewport of [
  { width: 1280, height: 900 },
  { width: 390, height: 844 },
]) {
  test(`hub unreachable at ${viewport.width} px: the page says so, stays within the panel, and offers the bundled model`, async ({ page }) => {
    await page.setViewportSize(viewport);
    const tried = await hubUnreachable(page);
    await page.goto('/');
    const status = page.getByTestId('engine-status');
    await expect(status).toHaveAttribute('data-state', 'failed');
    await expect(status).toHaveAttribute('data-reason', 'host_unreachable');
    await expect(status).toContainText('https://huggingface.co/');
    expect(tried.length).toBeGreaterThan(0);
    const offer = page.getByTestId('bundled-offer');
    await expect(offer).toContainText('huggingface.co cannot be reached');
    await expect(offer.getByRole('button', { name: 'Load the bundled TinyStories 656K' })).toBeVisible();
    expect(await overflowing(page), 'nothing runs past the panel').toEqual([]);
    // Its width is the panel's own, not the message's.
    const panel = (await page.locator('.model-panel').boundingBox())!;
    expect(panel.width).toBeLessThanOrEqual(viewport.width);
    for (const el of [status, offer]) {
      const box = (await el.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(panel.x + panel.width + 0.5);
    }
  });
}

test('hub unreachable: the bundled model loads in one click, from this origin, and answers a chat and a decision; its memory is shown', async ({ page, baseURL }) => {
  const tried = await hubUnreachable(page);
  const elsewhere: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(baseURL!) && !r.url().startsWith('https://huggingface.co/') && /^https?:/.test(r.url())) elsewhere.push(r.url());
  });
  await page.goto('/?device=wasm');
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
  const before = tried.length;
  await page.getByRole('button', { name: 'Load the bundled TinyStories 656K' }).click();
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('engine-status')).toContainText('Ready: TinyStories-656K');
  await expect(page.getByTestId('bundled-offer')).toHaveCount(0);
  expect(tried.length, 'nothing more asked of the hub').toBe(before);
  expect(elsewhere, 'the model came from this origin').toEqual([]);
  expect(new URL(page.url()).searchParams.get('host'), 'a reload opens it again').toBe('bundled');
  await expect(page.locator('#model-select')).toHaveValue('bundled:TinyStories-656K');
  await expect(page.locator('#model-select option:checked')).toContainText('bundled, no download');

  const chat = (await page.evaluate(() =>
    (window as any).jev.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: 'Once upon a time' }], max_tokens: 12 }),
  )) as { choices: { message: { content: string } }[]; usage: { completion_tokens: number } };
  expect(chat.usage.completion_tokens).toBeGreaterThan(0);
  expect(chat.choices[0]!.message.content.length).toBeGreaterThan(0);
  const decision = (await page.evaluate(() =>
    (window as any).jev.decisions.create({
      model: 'jev',
      state: 'The little dog found his ball and was very happy.',
      questions: { happy: { type: 'noul', instructions: 'Is the dog happy?', criteria: { true: 'Happy', false: 'Sad' } } },
    }),
  )) as { answers: Record<string, { noul: number }> };
  expect(decision.answers['happy']!.noul).toBeGreaterThan(0);
  expect(decision.answers['happy']!.noul).toBeLessThan(1);

  // The memory the panel shows is the engine's: the model's file, the caches the requests left.
  const memory = (await page.evaluate(() => (window as any).jev.status().then((s: any) => s.memory))) as { modelBytes: number; kvCacheBytes: number; wasmHeapBytes: number | null };
  expect(memory.modelBytes).toBe(BUNDLED_ONNX_BYTES);
  expect(memory.kvCacheBytes).toBeGreaterThan(0);
  // On wasm in this cross-origin-isolated page, the heap holds the weights and more.
  expect(memory.wasmHeapBytes).toBeGreaterThan(memory.modelBytes);
  await expect(page.getByTestId('memory-wasmHeapBytes')).toHaveAttribute('data-bytes', /^\d+$/);
  await expect(page.getByTestId('memory-modelBytes')).toHaveAttribute('data-bytes', String(BUNDLED_ONNX_BYTES));
  await expect(page.getByTestId('memory-modelBytes')).toHaveText('3.68 MB');
  await expect(page.getByTestId('memory-kvCacheBytes')).toHaveAttribute('data-bytes', String(memory.kvCacheBytes));
  await expect(page.getByTestId('memory-webgpuBufferBytes')).toHaveText('none (not on WebGPU)');

  // unload() frees it and reports what it freed.
  const unloaded = (await page.evaluate(() => (window as any).jev.unload())) as { freed: { modelBytes: number; kvCacheBytes: number }; status: { state: string; memory: { modelBytes: number } } };
  expect(unloaded.freed.modelBytes).toBe(BUNDLED_ONNX_BYTES);
  expect(unloaded.freed.kvCacheBytes).toBe(memory.kvCacheBytes);
  expect(unloaded.status.state).toBe('idle');
  expect(unloaded.status.memory.modelBytes).toBe(0);
});

test('?model=TinyStories-656K&host=bundled loads the bundled model directly', async ({ page }) => {
  await hubUnreachable(page);
  await page.goto('/?model=TinyStories-656K&host=bundled&device=wasm');
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('engine-status')).toContainText('Ready: TinyStories-656K');
  await expect(page.locator('#model-select')).toHaveValue('bundled:TinyStories-656K');
  await expect(page.getByTestId('model-facts')).toContainText('Bundled with the app');
});

test('offline from the first visit: the bundled model loads from the precache, never having been loaded before', async ({ context, page }) => {
  await hubUnreachable(page);
  await page.goto('/?device=wasm');
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
  // The service worker has precached the build, the bundled model's files among them.
  await page.waitForFunction(() => navigator.serviceWorker?.ready.then((r) => !!r.active));
  await page.reload();
  await page.waitForFunction(() => !!navigator.serviceWorker?.controller);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'failed');
  await context.setOffline(true);
  await page.getByRole('button', { name: 'Load the bundled TinyStories 656K' }).click();
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  const decision = (await page.evaluate(() =>
    (window as any).jev.decisions.create({ model: 'jev', state: 'A cat slept in the sun.', questions: { cat: { type: 'noul', instructions: 'Is there a cat?' } } }),
  )) as { answers: Record<string, { noul: number }> };
  expect(decision.answers['cat']!.noul).toBeGreaterThan(0);
});

test('on WebGPU the memory counts the buffers onnxruntime holds: at least the weights', async ({ page }) => {
  await hubUnreachable(page);
  await page.goto('/?model=TinyStories-656K&host=bundled&device=webgpu');
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await expect(page.getByTestId('engine-status')).toContainText('on webgpu');
  await page.evaluate(() => (window as any).jev.chat.completions.create({ model: 'jev', messages: [{ role: 'user', content: 'Once' }], max_tokens: 4 }));
  const memory = (await page.evaluate(() => (window as any).jev.status().then((s: any) => s.memory))) as { modelBytes: number; webgpuBufferBytes: number | null; wasmHeapBytes: number | null };
  expect(memory.modelBytes).toBe(BUNDLED_ONNX_BYTES);
  expect(memory.wasmHeapBytes).toBeNull();
  // The graph's weights (all but a few kB of its file) live in GPU buffers.
  expect(memory.webgpuBufferBytes).toBeGreaterThan(0.9 * BUNDLED_ONNX_BYTES);
  await expect(page.getByTestId('memory-webgpuBufferBytes')).toHaveAttribute('data-bytes', /^\d+$/);
});
