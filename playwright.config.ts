import { defineConfig } from '@playwright/test';
import { chromiumPath, DIST, PREVIEW_PORT, TEST_CHROMIUM_ARGS } from './e2e/support/env.ts';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // The screenshot writer is a tool, not a test: it runs only when asked for.
  testIgnore: process.env['UPDATE_SCREENSHOTS'] === '1' ? [] : ['**/playground-screenshots.spec.ts'],
  // Generous: a test that hangs still fails, later; a loaded machine (a CPU hog beside CI) slows every test.
  timeout: 300_000,
  expect: { timeout: 60_000 },
  // One spec file at a time. A page already keeps both cores busy (the engine runs one wasm
  // thread per core, beside the renderer and the GPU process): with two workers each test took
  // about twice as long (docs/reliability.md, "Where CI's time goes"). Specs share only the
  // preview server and the mirror, and the extra servers' ports are offset per worker
  // (e2e/support/ports.ts), so more workers are safe where there are more cores.
  workers: 1,
  retries: 0,
  reporter: [['list']],
  globalSetup: './e2e/support/global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${PREVIEW_PORT}`,
    launchOptions: {
      executablePath: chromiumPath(),
      args: TEST_CHROMIUM_ARGS,
    },
  },
  webServer: {
    command: `npx vite preview --port ${PREVIEW_PORT} --strictPort --outDir ${DIST}`,
    url: `http://127.0.0.1:${PREVIEW_PORT}`,
    reuseExistingServer: !process.env['CI'],
    timeout: 60_000,
  },
});
