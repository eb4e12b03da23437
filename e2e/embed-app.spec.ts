import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { build, preview, type PreviewServer } from 'vite';
import { EXTRA_PORT, MIRROR, REPO } from './support/env.ts';

const CONFIG = resolve(REPO, 'e2e/fixtures/embed-app/vite.config.ts');
const PORT = EXTRA_PORT.embedApp;
let server: PreviewServer;

test.beforeAll(async () => {
  test.setTimeout(240_000);
  // The fixture app is built against dist/lib (npm run build makes it): the package as published.
  // A later plain `vite build` of the playground empties dist/, so rebuild the library if it is gone.
  if (!existsSync(resolve(REPO, 'dist/lib/index.js'))) execSync('npm run build:lib', { cwd: REPO, stdio: 'inherit' });
  // The published types type-check in a consumer's strict project (skipLibCheck off).
  execSync('npx tsc -p e2e/fixtures/embed-app/tsconfig.json', { cwd: REPO, stdio: 'inherit' });
  await build({ configFile: CONFIG, logLevel: 'warn' });
  server = await preview({ configFile: CONFIG, logLevel: 'warn', preview: { port: PORT, strictPort: true } });
});
test.afterAll(async () => {
  await server?.close();
});

test('an app embedding the built package runs a decision and a streamed chat', async ({ page }) => {
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`http://127.0.0.1:${PORT}/?model=tiny-random-llama&host=${encodeURIComponent(MIRROR)}`);
  const results = await page.waitForFunction(() => (window as any).results, null, { timeout: 120_000 }).then((h) => h.jsonValue());
  expect(results.error).toBeUndefined();
  expect(Object.keys(results.decision.answers).sort()).toEqual(['anger', 'refund', 'team']);
  expect(results.decision.provider).toBe('wasm');
  expect(typeof results.text).toBe('string');
  expect(results.text.length).toBeGreaterThan(0);
  expect(results.status.threads).toBeGreaterThanOrEqual(1);
  // onnxruntime-web came from the app's own origin, not a CDN.
  expect(requests.filter((u) => u.includes('ort-wasm')).every((u) => u.startsWith(`http://127.0.0.1:${PORT}/`))).toBe(true);
  expect(requests.some((u) => u.includes('ort-wasm'))).toBe(true);
});
