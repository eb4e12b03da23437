import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath, DIST, PREVIEW_PORT } from './e2e/support/env.ts';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // The screenshot writer is a tool, not a test: it runs only when asked for.
  testIgnore: process.env['UPDATE_SCREENSHOTS'] === '1' ? [] : ['**/playground-screenshots.spec.ts'],
  // Generous: a test that hangs still fails, and two workers share 2 cores (with a CPU hog beside them in one CI drill).
  timeout: 300_000,
  expect: { timeout: 60_000 },
  // Two spec files at a time: a test spends most of its time in one page's engine worker (one
  // wasm thread busy), so two keep 2 cores busy. Specs share only the preview server and the
  // mirror; the extra servers' ports are offset per worker (e2e/support/env.ts).
  workers: 2,
  retries: 0,
  reporter: [['list']],
  globalSetup: './e2e/support/global-setup.ts',
  use: {
    baseURL: `http://127.0.0.1:${PREVIEW_PORT}`,
    launchOptions: {
      executablePath: chromiumPath(),
      args: CHROMIUM_ARGS,
    },
  },
  webServer: {
    command: `npx vite preview --port ${PREVIEW_PORT} --strictPort --outDir ${DIST}`,
    url: `http://127.0.0.1:${PREVIEW_PORT}`,
    reuseExistingServer: !process.env['CI'],
    timeout: 60_000,
  },
});
