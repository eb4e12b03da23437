import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPO } from '../../scripts/models/roots.ts';

export { GENERATED, REPO, VENDORED } from '../../scripts/models/roots.ts';
export const MIRROR_PORT = Number(process.env['JEV_MIRROR_PORT'] ?? 4391);
export const MIRROR = `http://127.0.0.1:${MIRROR_PORT}`;
/** The built app the browser tests serve (a separate build folder lets runs proceed side by side). */
export const DIST = resolve(REPO, process.env['JEV_DIST'] ?? 'dist');
export const PREVIEW_PORT = Number(process.env['JEV_PREVIEW_PORT'] ?? 4390);
/**
 * Ports for the extra servers some specs start, offset from the preview port so that parallel
 * runs do not clash, and by Playwright's worker (`TEST_PARALLEL_INDEX`, 0 … workers − 1) so that
 * two specs running at once do not either.
 */
const WORKER_OFFSET = 10 * Number(process.env['TEST_PARALLEL_INDEX'] ?? 0);
export const EXTRA_PORT = {
  embedApp: PREVIEW_PORT + 3 + WORKER_OFFSET,
  staticSite: PREVIEW_PORT + 4 + WORKER_OFFSET,
  cspSite: PREVIEW_PORT + 5 + WORKER_OFFSET,
  reasoningMirror: PREVIEW_PORT + 7 + WORKER_OFFSET,
} as const;

/** Chromium from CHROMIUM_PATH, else Debian's, else Playwright's own. */
export function chromiumPath(): string | undefined {
  const candidates = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium'];
  return candidates.find((p): p is string => !!p && existsSync(p));
}

/** Chromium's flags for every headless run here (tests, the benchmark, the evaluation CLI). */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  // Extra flags for a local investigation, separated by `|` (e.g. JEV_EXTRA_ARGS='--js-flags=--prof'); unset in CI.
  ...(process.env['JEV_EXTRA_ARGS'] ? process.env['JEV_EXTRA_ARGS'].split('|') : []),
];
