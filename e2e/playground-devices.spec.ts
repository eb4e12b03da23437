import { expect, test } from '@playwright/test';
import { chromiumPath, MIRROR, TEST_CHROMIUM_ARGS } from './support/env.ts';

/**
 * The model panel and the page's frame: loading another dtype, a browser without a WebGPU
 * adapter, and a phone's width. These run on the generated tiny-random-llama, which offers two
 * dtypes and is always there.
 */
test('the model panel loads another dtype through client.load, with fresh progress', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=q8`);
  await expect(page.getByTestId('engine-status')).toContainText('q8 on wasm');
  await page.getByLabel('Precision (dtype)').selectOption('fp32');
  await page.getByRole('button', { name: 'Load model' }).click();
  await expect(page.getByTestId('engine-status')).toContainText('fp32 on wasm');
  await expect(page).toHaveURL(/dtype=fp32/);
  await expect(page.getByTestId('load-progress')).toHaveAttribute('data-complete', 'true');
  const total = page.getByTestId('progress-total');
  await expect(total).toHaveJSProperty('value', Number(await total.getAttribute('max')));
  await expect(page.getByRole('button', { name: 'Loaded' })).toBeDisabled();
  const status = await page.evaluate(() => window.jev.status());
  expect(status.dtype).toBe('fp32');
});

test('without a WebGPU adapter the page explains it, offers wasm, and still works', async ({ playwright, baseURL }) => {
  // Chromium without --enable-unsafe-webgpu has the WebGPU API here but no adapter.
  const browser = await playwright.chromium.launch({ executablePath: chromiumPath(), args: TEST_CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu') });
  try {
    const page = await browser.newPage({ baseURL });
    await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}`);
    await expect(page.getByTestId('engine-status')).toContainText('on wasm');
    const help = page.getByTestId('webgpu-help');
    await expect(help).toContainText('WebGPU is not available here.');
    await expect(help).toContainText('found no graphics adapter');
    await expect(help).toContainText('the model runs on the processor through WebAssembly');
    await help.getByText('How to enable WebGPU').click();
    await expect(help).toContainText('chrome://flags');
    await expect(page.getByRole('option', { name: 'WebGPU (not available)' })).toBeDisabled();
    await page.getByRole('button', { name: 'Decide', exact: true }).click();
    await expect(page.getByTestId('decision-result')).toBeVisible();
  } finally {
    await browser.close();
  }
});

test('fits a phone: nothing wider than 375 px on either tab', async ({ browser }) => {
  const page = await browser.newPage({ viewport: { width: 375, height: 812 } });
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  await page.getByRole('button', { name: 'Decide', exact: true }).click();
  await expect(page.getByTestId('decision-result')).toBeVisible();
  const width = () => page.evaluate(() => document.documentElement.scrollWidth);
  expect(await width()).toBeLessThanOrEqual(375);
  await page.getByRole('tab', { name: 'Chat' }).click();
  await expect(page.getByText('Settings', { exact: true })).toBeVisible();
  await expect(page.getByLabel('Temperature'), 'settings start folded on a phone').toBeHidden();
  expect(await width()).toBeLessThanOrEqual(375);
  await page.close();
});

test('a model that cannot load says why in the model panel, and the previous one can be loaded again', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  // The mirror holds only the test models, so a registry model is not found there.
  await page.locator('#model-select').selectOption('HuggingFaceTB/SmolLM2-135M-Instruct');
  await expect(page.getByTestId('model-facts')).toContainText('Download: q4f16 134 MB');
  await page.getByRole('button', { name: 'Load model' }).click();
  const status = page.getByTestId('engine-status');
  await expect(status).toHaveAttribute('data-state', 'failed');
  await expect(status).toHaveAttribute('role', 'alert');
  await expect(status).toContainText('Loading HuggingFaceTB/SmolLM2-135M-Instruct failed: ');
  await page.locator('#model-select').selectOption('tiny-random-llama');
  await page.getByRole('button', { name: 'Load model' }).click();
  await expect(status).toHaveAttribute('data-state', 'ready');
  await page.getByRole('button', { name: 'Decide', exact: true }).click();
  await expect(page.getByTestId('decision-result')).toBeVisible();
});
