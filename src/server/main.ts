/**
 * The command line: `jev-local serve …` (package bin, bin/jev-local.mjs) and `npm run serve -- …`.
 * Wiring only: arguments → startServer → signals.
 */
import { toJevError } from '../contract/index.ts';
import { parseServeArgs, SERVE_USAGE, UsageError } from './cli-args.ts';
import { loadProgress } from './load-progress.ts';
import { startServer } from './serve.ts';

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || rest.includes('--help')) {
    console.log(SERVE_USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'serve') {
    console.error(`jev-local: unknown command ${JSON.stringify(command)}\n\n${SERVE_USAGE}`);
    return 2;
  }
  let options;
  try {
    options = parseServeArgs(rest);
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`jev-local serve: ${e.message}\n\n${SERVE_USAGE}`);
      return 2;
    }
    throw e;
  }
  try {
    const server = await startServer(options, { onProgress: loadProgress() });
    const status = await server.engine.status();
    const from = options.backend
      ? `from ${options.backend} at ${options.backendUrl}`
      : `in-process (onnxruntime-node ${status.device ?? 'cpu'}, ${status.dtype ?? options.dtype})`;
    console.log(`jev-local: serving ${options.model} ${from} on ${server.url}`);
    const stop = () => void server.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1; // keeps running
  } catch (e) {
    const err = toJevError(e);
    console.error(`jev-local serve: ${err.message}`);
    return 1;
  }
}
