#!/usr/bin/env node
// The package's command line: `jev-local serve --model ID …` (the engine in-process) or
// `jev-local serve --backend sglang|vllm --backend-url URL --model ID …` (docs/server.md). In a checkout, the TypeScript under src/server/ runs through tsx; in the
// published package (whose files are dist/lib), the build of it, dist/lib/server.js (vite.server.config.ts).
import { existsSync } from 'node:fs';

const source = new URL('../src/server/main.ts', import.meta.url);
let main;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(source.href));
} else {
  ({ main } = await import('../dist/lib/server.js'));
}
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
