import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // @mlc-ai/web-xgrammar is a UMD bundle in a "type": "module" package: inlined, Vite's transform
    // gives its exports to the engine's dynamic import (src/engine/grammar/xgrammar-backend.ts).
    server: { deps: { inline: ['@mlc-ai/web-xgrammar'] } },
  },
});
