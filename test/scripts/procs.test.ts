import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserTree, grownRenderer, peakRss, rendererRss, resetPeakRss } from '../../scripts/machine/procs.ts';

// The bench reads each page's memory from /proc: a "browser" (a process whose command line carries
// the marker) and its "renderers" (descendants with --type=renderer), stood in for by Node processes.
const MiB = 2 ** 20;
const onLinux = existsSync('/proc/self/status');

/**
 * A renderer stand-in: allocates (and touches) `mib` MiB when `<dir>/grow-<name>` appears, frees it when
 * `<dir>/free-<name>` does, and says when each is done by writing `<dir>/grown-<name>` and `<dir>/freed-<name>`.
 * The test waits on those signals, not on the kernel's counters: the buffer is one mmap'd block (over glibc's
 * mmap threshold) freed by a full GC that sweeps array buffers on the main thread (`--single-threaded-gc
 * --no-concurrent-array-buffer-sweeping`), so by the time `freed-` exists the pages are unmapped, however
 * busy the machine is. The stand-in checks its own VmRSS before it signals.
 */
const RENDERER = `
const fs = require('node:fs');
const [dir, name, mib] = process.argv.slice(-3);
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
let held = null, done = false;
setInterval(() => {
  if (!held && !done && fs.existsSync(dir + '/grow-' + name)) {
    held = Buffer.alloc(Number(mib) * 1048576, 1);
    fs.writeFileSync(dir + '/grown-' + name, String(rss()));
  }
  if (held && fs.existsSync(dir + '/free-' + name)) {
    const grown = rss();
    held = null;
    done = true;
    globalThis.gc();
    fs.writeFileSync(dir + '/freed-' + name, JSON.stringify({ grown, freed: rss() }));
  }
}, 20);`;

/** The browser stand-in: starts two renderers, a and b, and stays (its own command line must not name a type). */
const BROWSER = (dir: string) => `
const { spawn } = require('node:child_process');
for (const name of ['a', 'b']) spawn(process.execPath, ['--expose-gc', '--single-threaded-gc', '--no-concurrent-array-buffer-sweeping', '-e', ${JSON.stringify(RENDERER)}, '--', '--ty' + 'pe=renderer', ${JSON.stringify(dir)}, name, '96'], { stdio: 'ignore' });
setInterval(() => {}, 1000);`;

/**
 * Waits for a condition that a child process makes true (a signal file it writes, a process it starts), never
 * for the garbage collector or the kernel's lazily synced counters. The deadline only turns a broken child into
 * a clear failure rather than a hung suite; it is far past any wait seen on a loaded machine.
 */
const until = async (test: () => boolean, what: string, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!test()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};
describe.runIf(onLinux)('scripts/machine/procs.ts: a page renderer found by its growth, and its peak resident set', () => {
  const dir = mkdtempSync(join(tmpdir(), 'jev-procs-'));
  const marker = `jev-procs-test-${process.pid}-${Date.now()}`;
  let browser: ChildProcess;
  const signalled = (name: string) => existsSync(join(dir, name));
  const pidOf = (name: string) => browserTree(marker).find((p) => p.type === 'renderer' && readCmd(p.pid).endsWith(`\0${name}\x0096\0`))?.pid;

  beforeAll(async () => {
    browser = spawn(process.execPath, ['-e', BROWSER(dir), '--', `--jev-bench-marker=${marker}`], { stdio: 'ignore' });
    await until(() => rendererRss(marker).size === 2, 'two renderers');
  });
  afterAll(() => {
    for (const p of browserTree(marker)) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    browser?.kill('SIGKILL');
  });

  it('names the renderer that grew, not one excluded, and reads and restarts its peak', async () => {
    const a = pidOf('a')!;
    const b = pidOf('b')!;
    expect(a).toBeTypeOf('number');
    expect(b).toBeTypeOf('number');
    const before = rendererRss(marker);
    expect([...before.keys()].sort()).toEqual([a, b].sort());

    writeFileSync(join(dir, 'grow-a'), '');
    await until(() => signalled('grown-a'), 'renderer a to say it grew');
    // the whole buffer is touched before the stand-in signals, so the kernel's count includes it
    expect(rendererRss(marker).get(a)! - before.get(a)!).toBeGreaterThan(90 * MiB);
    expect(grownRenderer(marker, before)).toBe(a);
    // excluding a, the other one is named, whatever (little) it grew
    expect(grownRenderer(marker, before, [a])).toBe(b);

    // VmHWM: at least what a holds now, and at least the 96 MiB it allocated over its start
    const now = rendererRss(marker).get(a)!;
    const peak = peakRss(a)!;
    expect(peak).toBeGreaterThanOrEqual(now - MiB);
    expect(peak - before.get(a)!).toBeGreaterThan(90 * MiB);

    writeFileSync(join(dir, 'free-a'), '');
    await until(() => signalled('freed-a'), 'renderer a to say it freed its buffer');
    // the stand-in's own reading: the pages are gone (munmap), not waiting on a collector
    const own = JSON.parse(readFileSync(join(dir, 'freed-a'), 'utf8')) as { grown: number; freed: number };
    expect(own.grown - own.freed).toBeGreaterThan(90 * MiB);
    expect(peak - rendererRss(marker).get(a)!).toBeGreaterThan(90 * MiB - MiB);
    // the peak outlives the memory (within the kernel's lazily synced counters)
    expect(peakRss(a)).toBeGreaterThan(peak - MiB);
    expect(resetPeakRss(a)).toBe(true);
    const restarted = peakRss(a)!;
    expect(restarted).toBeLessThan(peak - 90 * MiB);
    expect(restarted).toBeGreaterThanOrEqual(rendererRss(marker).get(a)! - MiB);
  });

  it('reads nothing of a process that does not exist', () => {
    expect(peakRss(2 ** 22 + 1)).toBeNull();
    expect(resetPeakRss(2 ** 22 + 1)).toBe(false);
    expect(grownRenderer('no-such-marker', new Map())).toBeNull();
  });
});

function readCmd(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
}
