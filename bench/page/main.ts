/**
 * The bench page: starts the workload worker and exposes it to bench/run.ts as `window.bench`.
 * `bench.call(name, ...args)` runs one worker method. (performance.measureUserAgentSpecificMemory
 * is not used: in this headless Chromium it did not answer within 60 s.)
 */
import * as Comlink from 'comlink';
import type { BenchWorker } from './bench.worker.ts';

const worker = Comlink.wrap<BenchWorker>(new Worker(new URL('./bench.worker.ts', import.meta.url), { type: 'module' }));

const bench = {
  call(name: keyof BenchWorker, ...args: unknown[]): Promise<unknown> {
    return (worker[name] as unknown as (...a: unknown[]) => Promise<unknown>)(...args);
  },
};

(window as unknown as { bench: typeof bench }).bench = bench;
document.getElementById('status')!.textContent = 'bench page ready';
