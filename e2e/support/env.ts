/**
 * The browser tests' environment, in one module: where the models are (scripts/models/roots.ts;
 * e2e reads the model roots through here and nowhere else), the built app, the servers' ports, and
 * which Chromium with which flags (scripts/machine/chromium.ts). Nothing in scripts/ reaches this
 * module (`.dependency-cruiser.cjs`, tools-scripts-not-e2e-env): the tools there that reuse e2e's
 * harness import ports.ts, model-host.ts and static-server.ts, which import nothing of scripts/.
 */
import { resolve } from 'node:path';
import { REPO } from '../../scripts/models/roots.ts';

export { GENERATED, REPO, VENDORED } from '../../scripts/models/roots.ts';
export { CHROMIUM_ARGS, TEST_CHROMIUM_ARGS, chromiumPath } from '../../scripts/machine/chromium.ts';
export { EXTRA_PORT, MIRROR, MIRROR_PORT, PREVIEW_PORT } from './ports.ts';
/** The built app the browser tests serve (a separate build folder lets runs proceed side by side). */
export const DIST = resolve(REPO, process.env['JEV_DIST'] ?? 'dist');
