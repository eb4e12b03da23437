/**
 * The bench page: starts the workload worker and exposes it to bench/run.ts as `window.bench`.
 * `bench.call(name, ...args)` runs one worker method; `bench.memory()` measures the memory of the
 * page and its workers where the browser allows it (cross-origin isolated pages only).
 */
import * as Comlink from 'comlink';
import type { BenchWorker } from './bench.worker.ts';

const worker = Comlink.wrap<BenchWorker>(new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' }));

interface MemoryBreakdown {
  bytes: number;
  breakdown: { bytes: number; types: string[]; attribution: { scope: string }[] }[];
}

const bench = {
  call(name: keyof BenchWorker, ...args: unknown[]): Promise<unknown> {
    return (worker[name] as unknown as (...a: unknown[]) => Promise<unknown>)(...args);
  },
  /** performance.measureUserAgentSpecificMemory(): bytes of the page and its workers, by scope. */
  async memory(): Promise<{ total: number; byScope: Record<string, number> } | null> {
    const p = performance as Performance & { measureUserAgentSpecificMemory?: () => Promise<MemoryBreakdown> };
    if (!self.crossOriginIsolated || !p.measureUserAgentSpecificMemory) return null;
    const m = await p.measureUserAgentSpecificMemory();
    const byScope: Record<string, number> = {};
    for (const b of m.breakdown) {
      const scope = b.attribution[0]?.scope ?? (b.types.join('+') || 'shared');
      byScope[scope] = (byScope[scope] ?? 0) + b.bytes;
    }
    return { total: m.bytes, byScope };
  },
};

(window as unknown as { bench: typeof bench }).bench = bench;
document.getElementById('status')!.textContent = 'bench page ready';
