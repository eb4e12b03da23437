import { existsSync } from 'node:fs';

/**
 * Which Chromium the tools launch, and with which flags: the browser tests (e2e/, through
 * e2e/support/env.ts), the benchmark, the evaluation, the fuzz campaign and the soak.
 */

/** Chromium from CHROMIUM_PATH, else Debian's, else Playwright's own. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium'];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** Extra flags for a local investigation, separated by `|` (e.g. JEV_EXTRA_ARGS='--js-flags=--prof'); unset in CI. Last, so they win. */
const EXTRA_ARGS = process.env['JEV_EXTRA_ARGS'] ? process.env['JEV_EXTRA_ARGS'].split('|') : [];
const BASE_ARGS = ['--no-sandbox', '--enable-unsafe-webgpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** Chromium's flags for every headless run here (tests, the benchmark, the evaluation CLI). */
export const CHROMIUM_ARGS = [...BASE_ARGS, ...EXTRA_ARGS];

/**
 * The browser tests' flags: CHROMIUM_ARGS with V8's wasm tiering budget raised from its default
 * (13,000,000 in Chromium 156, `--js-flags=--help`) to 180,000,000. Every fresh context compiles
 * onnxruntime's 17 MB wasm again, and with the default budget the functions a model load runs
 * once (graph parsing, optimization, weight packing) reach the top tier too: 5 s of TurboFan on
 * background threads per page, on a machine whose two cores the page already keeps busy. With the
 * higher budget only the kernels that run long tier up. Measured on five spec files (playground,
 * fuzz, decision-facade, storage, formats), two runs each way, alternating: 476 and 481 s against
 * 534 and 555 s, 751 and 764 core-seconds against 904 and 941 (docs/reliability.md, "Where CI's
 * time goes"). Tests only: the benchmark and the evaluation CLI measure what a user's browser
 * runs, with V8's defaults.
 */
export const TEST_CHROMIUM_ARGS = [...BASE_ARGS, '--js-flags=--wasm-tiering-budget=180000000', ...EXTRA_ARGS];
