import { expect, test } from '@playwright/test';
import { MIRROR } from './support/env.ts';

test('the built playground is cross-origin isolated and the engine runs one wasm thread per core', async ({ page }) => {
  await page.goto(`/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}&device=wasm&dtype=fp32`);
  const out = await page.evaluate(async () => ({
    isolated: crossOriginIsolated,
    cores: navigator.hardwareConcurrency,
    status: await (window as any).jev.ready,
  }));
  expect(out.isolated).toBe(true);
  expect(out.status.device).toBe('wasm');
  expect(out.status.threads).toBe(out.cores);
});
