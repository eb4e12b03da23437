import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumPath, DIST, PREVIEW_PORT } from './e2e/support/env.ts';

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  // The screenshot writer is a tool, not a test: it runs only when asked for.
  testIgnore: process.env['UPDATE_SCREENSHOTS'] === '1' ? [] : ['**/playground-screenshots.spec.ts'],
  timeout: 180_000,
  expect: { timeout: 60_000 },
  workers: 1,
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
