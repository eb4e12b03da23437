#!/usr/bin/env node
// The package's command line: `jev-local serve --backend sglang|vllm --backend-url URL --model ID …`
// (docs/scale-out.md). The server is TypeScript under src/server/, run through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/server/main.ts');
const code = await main(process.argv.slice(2));
if (code >= 0) process.exit(code);
