/**
 * The soak's memory readings of a Chromium: the renderer's resident set (read from /proc through
 * scripts/machine/procs.ts: it includes onnxruntime's wasm memory, which no JS heap figure does) and the
 * engine worker's JS heap after a full garbage collection, taken after a critical memory-pressure
 * signal and a GC of the page, so that what stays resident is what is held. The wasm heap, the
 * tensor ledger and the prefix cache's bytes come from the engine's own status (mix.ts).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Page } from '@playwright/test';
import { browserTree } from '../machine/procs.ts';
import { engineWorkerHeap } from '../../e2e/reliability-support.ts';

export interface MemoryReading {
  /** The largest renderer's resident set (the page, its engine worker and onnxruntime's threads). */
  rendererRss: number;
  /**
   * That renderer's resident set in its parts: private (anonymous) memory, where a leak of the
   * page, the worker, V8 or onnxruntime grows; mapped files (Chromium's own code, which the
   * kernel pages in and out as the machine's load asks); shared memory (buffers shared with the
   * GPU and browser processes).
   */
  rendererAnon: number;
  rendererFile: number;
  rendererShmem: number;
  /** All of the browser's processes together. */
  treeRss: number;
  /** The page's own V8 heap in use after a full GC (the playground, the facade, the service worker's relay), where the probe reads it. */
  pageHeap: number | null;
  /** The service worker's V8 heap in use after a full GC (it relays the HTTP requests), where the probe reads it. */
  swHeap: number | null;
  /** The engine worker's V8 heap in use after a full GC, and its ArrayBuffer backing stores. */
  workerHeap: number;
  workerBuffers: number;
}

/** What a reading needs of a browser: its process tree's marker, a way to settle the page, the worker's heap. */
export interface MemoryProbe {
  /** A string on the browser process's command line (its `--user-data-dir=…`). */
  marker: string;
  /** Memory pressure (V8 and Chromium's allocators hand free pages back) and a GC of the page. */
  settle(): Promise<void>;
  /** The page's heap in use after a GC. */
  pageHeap?(): Promise<number>;
  /** The service worker's heap in use after a GC, or null with none running. */
  serviceWorkerHeap?(): Promise<number | null>;
  /** The engine worker's heap after a GC. */
  workerHeap(): Promise<{ used: number; buffers: number }>;
  /** The bytes of the engine worker's objects after a GC, V8's compiled code left out (a heap snapshot: slow, so sampled less often). */
  workerObjects?(): Promise<number>;
}

/** A reader of the memory of the browser `probe` reaches. */
export function memoryReader(probe: MemoryProbe): () => Promise<MemoryReading> {
  return async () => {
    await probe.settle();
    const worker = await probe.workerHeap();
    const pageHeap = probe.pageHeap ? await probe.pageHeap() : null;
    const swHeap = probe.serviceWorkerHeap ? await probe.serviceWorkerHeap() : null;
    const tree = browserTree(probe.marker);
    const renderer = tree.filter((p) => p.type === 'renderer').reduce<(typeof tree)[number] | null>((a, p) => (a === null || p.rss > a.rss ? p : a), null);
    return {
      pageHeap,
      swHeap,
      rendererRss: renderer?.rss ?? 0,
      rendererAnon: renderer?.rssAnon ?? 0,
      rendererFile: renderer?.rssFile ?? 0,
      rendererShmem: renderer?.rssShmem ?? 0,
      treeRss: tree.reduce((s, p) => s + p.rss, 0),
      workerHeap: worker.used,
      workerBuffers: worker.buffers,
    };
  };
}

/** The `--user-data-dir` of the Chromium this process launched (as Playwright does): what names its process tree in /proc. */
function launchedBrowserMarker(): string {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const dir = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').find((a) => a.startsWith('--user-data-dir='));
      if (dir) return dir;
    } catch {
      /* the process ended meanwhile */
    }
  }
  throw new Error('no Chromium launched by this process was found in /proc');
}

/**
 * The probe of a Playwright page (the short soak of `npm test`). Playwright's network tracking
 * keeps request and response bodies in the renderer (pipe-browser.ts), so its RSS there holds a
 * generous bound only; `npm run soak` drives Chromium over a pipe instead.
 */
export async function playwrightProbe(page: Page): Promise<MemoryProbe> {
  const heap = await engineWorkerHeap(page);
  const cdp = await page.context().newCDPSession(page);
  return {
    marker: launchedBrowserMarker(),
    async settle() {
      await cdp.send('Memory.simulatePressureNotification', { level: 'critical' });
      await cdp.send('HeapProfiler.collectGarbage');
    },
    workerHeap: heap,
  };
}
