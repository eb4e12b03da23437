import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // V8's wasm tiering budget raised from Node 20's default (1,800,000) to 25,000,000, as the browser
    // tests raise Chromium's (scripts/machine/chromium.ts, TEST_CHROMIUM_ARGS): the functions a model load runs
    // once stay at the baseline tier, and only the kernels that run long are compiled again at the top.
    // Measured on five engine files, two alternating pairs: 104 and 97 s against 131 and 104 s.
    execArgv: ['--wasm-tiering-budget=25000000'],
    // Two files at a time even on 2 cores (vitest's default there, cores - 1, is one): measured
    // 8-21 % faster on this 2-core machine, not half, as the forks contend for the cores. Nothing in
    // the suite waits on a wall clock, the garbage collector or a shared port or folder (docs/reliability.md).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // @mlc-ai/web-xgrammar is a UMD bundle in a "type": "module" package: inlined, Vite's transform
    // gives its exports to the engine's dynamic import (src/engine/grammar/xgrammar-backend.ts).
    server: { deps: { inline: ['@mlc-ai/web-xgrammar'] } },
  },
});
