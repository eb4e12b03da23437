/**
 * The two acceptance checks (schema-verdict.ts) run in a `worker_threads` Worker, one schema at a
 * time, with a time limit: the compiler's lowering is synchronous, and a schema it would take
 * minutes on (a length bound of thousands intersected with a pattern) must not stall the survey.
 * Past `limitMs` the worker is terminated, the schema gets a `timeout` verdict, and the next
 * schema starts a new worker. The worker loads the TypeScript sources through tsx's loader, as
 * src/engine/grammar/grammar-thread.ts does for the grammar worker.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Verdict } from './schema-verdict.ts';

export type PoolVerdict = Verdict | { stage: 'timeout'; keyword: string; reason: string; ms: number };

export class VerdictPool {
  #worker: Worker | null = null;
  #nextId = 1;

  constructor(readonly limitMs: number) {}

  #spawn(): Worker {
    const entry = new URL('./verdict-worker.ts', import.meta.url).href;
    const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
    const boot = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(entry)});`;
    const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`));
    worker.unref();
    return worker;
  }

  /** The verdict on `schema`, or `timeout` past the limit (the worker is then replaced). */
  verdict(schema: unknown): Promise<PoolVerdict> {
    const worker = (this.#worker ??= this.#spawn());
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
      };
      const onMessage = (m: { id: number; verdict: Verdict }) => {
        if (m.id !== id) return;
        done();
        resolve(m.verdict);
      };
      const onError = (e: Error) => {
        done();
        this.#worker = null;
        reject(e);
      };
      const timer = setTimeout(() => {
        done();
        this.#worker = null;
        void worker.terminate();
        const ms = Math.round(performance.now() - started);
        resolve({ stage: 'timeout', keyword: 'schema', reason: `the contract's check and the compiler's lowering took more than ${this.limitMs} ms (stopped)`, ms });
      }, this.limitMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.postMessage({ id, schema });
    });
  }

  close(): void {
    void this.#worker?.terminate();
    this.#worker = null;
  }
}
