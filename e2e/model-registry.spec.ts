import { expect, test } from '@playwright/test';
import { MIRROR } from './support/env.ts';

/**
 * The playground's registry (src/ui/model/model-registry.ts) as a user meets it: each recommended model's
 * dtypes, and a download per dtype that counts the graph and its external-data files. Nothing is
 * loaded from the hub (unreachable here): the page serves the generated tiny model meanwhile.
 */
test('the model panel offers the dtypes of each registry model, with downloads that include external data', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm`);
  await expect(page.getByTestId('engine-status')).toHaveAttribute('data-state', 'ready');
  const facts = page.getByTestId('model-facts');
  const dtypes = page.locator('#dtype-select option');

  await page.locator('#model-select').selectOption('HuggingFaceTB/SmolLM2-1.7B-Instruct');
  await expect(facts).toContainText('Download: q4f16 1.11 GB · q4 1.41 GB · q8 1.71 GB · fp16 3.43 GB (graph + a data file)');
  await expect(dtypes).toHaveText(['Auto', 'q4f16 · 1.11 GB', 'q4 · 1.41 GB', 'q8 · 1.71 GB', 'fp16 · 3.43 GB']);

  await page.locator('#model-select').selectOption('onnx-community/Phi-4-mini-instruct-web-q4f16');
  await expect(facts).toContainText('Needs WebGPU');
  await expect(facts).toContainText('Download: q4f16 3.41 GB (graph + 2 data files)');
  await expect(dtypes).toHaveText(['Auto', 'q4f16 · 3.41 GB']);

  // A model without external data reads as before.
  await page.locator('#model-select').selectOption('HuggingFaceTB/SmolLM2-135M-Instruct');
  await expect(facts).toContainText('Download: q4f16 134 MB · q4 200 MB · fp16 327 MB · fp32 654 MB');
  await expect(facts).not.toContainText('data file');
});
