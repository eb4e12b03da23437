import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';

/** "CPU model, N cores, M GiB": the CPU model as /proc/cpuinfo names it. */
export function machineDescription(): string {
  let model = cpus()[0]?.model?.trim() ?? 'unknown CPU';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? model;
  } catch {
    /* not Linux */
  }
  return `${model}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${process.arch}`;
}

/** `git rev-parse --short HEAD`, with `-dirty` when the working tree has changes (read-only git calls). */
export function commitId(cwd: string): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha}-dirty` : sha;
  } catch {
    return 'unknown';
  }
}

/** The browser binary's own version line ("Chromium 156.0.8078.79 ..."). */
export function browserVersion(executable: string | undefined): string {
  if (!executable) return 'Playwright Chromium';
  try {
    const out = execFileSync(executable, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return out.replace(/\s+built on.*$/, '') || executable;
  } catch {
    return executable;
  }
}
