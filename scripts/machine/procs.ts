import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Memory and CPU of the Chromium the bench launched, read from /proc (Linux): the browser
 * process is the one whose command line names our profile folder; its descendants are the
 * renderers (the bench page, its worker and onnxruntime's threads live in one), the GPU process
 * and utilities. Resident set sizes include onnxruntime's wasm memory, which no JS heap figure does.
 */
const PAGE = 4096;
const TICKS = 100; // USER_HZ on Linux

interface Proc {
  pid: number;
  ppid: number;
  type: string;
  rss: number;
  /** The resident set's parts (Linux's RssAnon, RssFile, RssShmem): private memory, mapped files (code), shared memory. */
  rssAnon: number;
  rssFile: number;
  rssShmem: number;
  hwm: number;
  cpu: number; // seconds
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function pids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
}

function proc(pid: number): Proc | null {
  const stat = read(`/proc/${pid}/stat`);
  const status = read(`/proc/${pid}/status`);
  const cmd = read(`/proc/${pid}/cmdline`);
  if (!stat || !status || cmd === null) return null;
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
  const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser';
  return {
    pid,
    ppid: Number(rest[1]),
    type,
    rss: kb('VmRSS') || Number(rest[21]) * PAGE,
    rssAnon: kb('RssAnon'),
    rssFile: kb('RssFile'),
    rssShmem: kb('RssShmem'),
    hwm: kb('VmHWM'),
    cpu: (Number(rest[11]) + Number(rest[12])) / TICKS,
  };
}

/** The browser process whose command line carries `marker` (its --user-data-dir) and its descendants. */
export function browserTree(marker: string): Proc[] {
  const all = pids();
  const root = all.find((pid) => {
    const cmd = read(`/proc/${pid}/cmdline`);
    return !!cmd && cmd.includes(marker) && !cmd.includes('--type=');
  });
  if (root === undefined) return [];
  const procs = all.map(proc).filter((p): p is Proc => !!p);
  const tree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) if (!tree.has(p.pid) && tree.has(p.ppid)) (tree.add(p.pid), (grew = true));
  }
  return procs.filter((p) => tree.has(p.pid));
}

export interface MemoryPeaks {
  /** Largest resident set of one renderer (the page, its worker and onnxruntime's threads). */
  rendererRss: number;
  /** Largest sum of resident sets over the whole browser tree (shared pages counted per process). */
  treeRss: number;
}

/** Samples the tree every `intervalMs`, keeping peaks since the last mark. */
export class ProcessSampler {
  #timer: NodeJS.Timeout | null = null;
  #peaks: MemoryPeaks = { rendererRss: 0, treeRss: 0 };

  constructor(
    private readonly marker: string,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.#timer = setInterval(() => this.sample(), this.intervalMs);
    this.#timer.unref();
  }

  sample(): Proc[] {
    const tree = browserTree(this.marker);
    const renderer = Math.max(0, ...tree.filter((p) => p.type === 'renderer').map((p) => p.rss));
    const total = tree.reduce((s, p) => s + p.rss, 0);
    if (renderer > this.#peaks.rendererRss) this.#peaks.rendererRss = renderer;
    if (total > this.#peaks.treeRss) this.#peaks.treeRss = total;
    return tree;
  }

  /** Peaks since the previous mark (or start), then starts a new interval. */
  mark(): MemoryPeaks {
    this.sample();
    const p = this.#peaks;
    this.#peaks = { rendererRss: 0, treeRss: 0 };
    return p;
  }

  /** CPU seconds used by the whole tree so far. */
  cpu(): number {
    return browserTree(this.marker).reduce((s, p) => s + p.cpu, 0);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}

export function loadAverage(): number[] {
  return (read('/proc/loadavg') ?? '0 0 0').split(' ').slice(0, 3).map(Number);
}

/** Resident set of each renderer of the tree, by pid. */
export function rendererRss(marker: string): Map<number, number> {
  return new Map(browserTree(marker).filter((p) => p.type === 'renderer').map((p) => [p.pid, p.rss]));
}

/** The renderer that grew most from `before` to now (a page's renderer is the one its load grew), not one of `exclude`. */
export function grownRenderer(marker: string, before: Map<number, number>, exclude: readonly number[] = []): number | null {
  let best: number | null = null;
  let growth = -Infinity;
  for (const [pid, rss] of rendererRss(marker)) {
    const g = rss - (before.get(pid) ?? 0);
    if (!exclude.includes(pid) && g > growth) [best, growth] = [pid, g];
  }
  return best;
}

/** A process's peak resident set (VmHWM) since it started or since `resetPeakRss`. */
export function peakRss(pid: number): number | null {
  const status = read(`/proc/${pid}/status`);
  const kb = status && /^VmHWM:\s+(\d+)/m.exec(status)?.[1];
  return kb ? Number(kb) * 1024 : null;
}

/** Restarts a process's peak (VmHWM) from its present resident set (Linux `clear_refs` 5); false where not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
