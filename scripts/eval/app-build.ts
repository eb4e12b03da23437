/**
 * The built playground the CLI serves: `dist-eval/`, its own folder so that `npm run build`'s
 * `dist/` is never touched. It is built (`vite build --outDir dist-eval`) when it is missing or
 * older than any source it is made from.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
export const EVAL_DIST = join(REPO, 'dist-eval');

/** What the app is built from: a change to any of these makes dist-eval stale. */
const SOURCES = ['src', 'worker', 'public', 'build', 'index.html', 'vite.config.ts', 'package-lock.json'];

/** The newest modification time (ms) of a file or of any file under a folder. */
function newest(path: string): number {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

export function isStale(dist: string): boolean {
  const index = join(dist, 'index.html');
  if (!existsSync(index)) return true;
  const built = statSync(index).mtimeMs;
  return SOURCES.some((source) => newest(join(REPO, source)) > built);
}

/** Builds the playground into `dist` with the repository's Vite config; rejects with Vite's output on failure. */
export function buildApp(dist: string, log: (line: string) => void): Promise<void> {
  log(`building the playground into ${dist} (vite build) …`);
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(REPO, 'node_modules/vite/bin/vite.js'), 'build', '--outDir', dist, '--emptyOutDir', '--logLevel', 'warn'], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolvePromise() : reject(new Error(`vite build failed (exit ${code}):\n${output.slice(-4000)}`))));
  });
}

/** The folder to serve: `app` as given (it must hold index.html), else dist-eval, built first if stale. */
export async function appFolder(app: string | null, log: (line: string) => void): Promise<string> {
  if (app !== null) {
    const dir = resolve(app);
    if (!existsSync(join(dir, 'index.html'))) throw new Error(`--app ${app}: no index.html there (build it with: npx vite build --outDir ${app})`);
    return dir;
  }
  if (isStale(EVAL_DIST)) await buildApp(EVAL_DIST, log);
  return EVAL_DIST;
}
