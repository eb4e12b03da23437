import { buildClientBundle } from './client-bundle.ts';
import { startModelHost } from './model-host.ts';
import { GENERATED, MIRROR_PORT, VENDORED } from './env.ts';

/** Starts the model mirror (a plain static server in the hub layout) for the whole run. */
export default async function globalSetup() {
  await buildClientBundle();
  const mirror = await startModelHost([GENERATED, VENDORED], MIRROR_PORT);
  return async () => mirror.close();
}
