/**
 * The ports of the servers the browser tests start: the model mirror, the preview of the built
 * app, and the extra servers some specs start. Imports nothing, so that the tools in scripts/ that
 * reuse e2e's harness (the soak, the fuzz campaign) never reach e2e/support/env.ts, the module
 * through which e2e reads scripts/models/roots.ts.
 */
export const MIRROR_PORT = Number(process.env['JEV_MIRROR_PORT'] ?? 4391);
export const MIRROR = `http://127.0.0.1:${MIRROR_PORT}`;
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
