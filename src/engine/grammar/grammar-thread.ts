/**
 * Starts a grammar worker (grammar-worker.ts) where the engine runs: a dedicated module Worker in
 * the browser (the engine's worker spawns it: nested workers are allowed; Vite bundles
 * worker/grammar.worker.ts for it, as `new Worker(new URL(…))` below), a `worker_threads` Worker
 * in Node (vitest, the bench and the scripts, which run the TypeScript sources: the worker loads
 * worker/grammar.worker.node.ts through tsx's loader, as its parent did; the built server's engine
 * thread, dist/lib/engine-thread.js: the build of it beside it, dist/lib/grammar-thread.js).
 */
import type { GrammarReply, GrammarRequest, GrammarThread } from './grammar-worker-protocol.ts';

/** Whether the engine runs in Node (no Worker of the web). */
function inNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: string } }; Worker?: unknown };
  return typeof g.process?.versions?.node === 'string' && typeof g.Worker !== 'function';
}

export async function spawnGrammarThread(): Promise<GrammarThread> {
  return inNode() ? nodeThread() : webThread();
}

function webThread(): GrammarThread {
  const worker = new Worker(new URL('../../../worker/grammar.worker.ts', import.meta.url), { type: 'module', name: 'jev-grammar' });
  return {
    post: (message: GrammarRequest) => worker.postMessage(message),
    listen(onReply, onDeath) {
      worker.onmessage = (event: MessageEvent<GrammarReply>) => onReply(event.data);
      worker.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        onDeath(event.message || 'the grammar worker failed');
      };
    },
    terminate: () => worker.terminate(),
  };
}

interface NodeWorker {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (value: GrammarReply) => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'exit', listener: (code: number) => void): void;
  terminate(): Promise<number>;
  ref(): void;
  unref(): void;
}

async function nodeThread(): Promise<GrammarThread> {
  const specifier = 'node:worker_threads'; // not a literal: the browser's bundle leaves it alone
  const { Worker: NodeWorkerClass } = (await import(/* @vite-ignore */ specifier)) as { Worker: new (url: URL) => NodeWorker };
  // The built server's threads (dist/lib/engine-thread.js, vite.server.config.ts) start the grammar
  // thread's build beside them, a plain module: no TypeScript, no tsx.
  if (!/\.[cm]?ts$/.test(new URL(import.meta.url).pathname)) return threadOf(new NodeWorkerClass(new URL(['.', 'grammar-thread.js'].join('/'), import.meta.url)));
  const moduleSpecifier = 'node:module';
  const urlSpecifier = 'node:url';
  const { createRequire } = (await import(/* @vite-ignore */ moduleSpecifier)) as { createRequire(url: string): { resolve(id: string): string } };
  const { pathToFileURL } = (await import(/* @vite-ignore */ urlSpecifier)) as { pathToFileURL(path: string): URL };
  // From this file's own URL, not as `new URL('…', import.meta.url)`: bundlers would take that for an asset to emit.
  const url = import.meta.url.replace(/src\/engine\/grammar\/[^/]*$/, 'worker/grammar.worker.node.ts');
  // The ES module build of tsx's API (its exports give `require` the CommonJS one).
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  // An ES module (not an eval script, whose `module` and `exports` globals would take xgrammar's
  // UMD exports): tsx's loader, registered inside the worker, reads the TypeScript entry.
  const boot = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(url)});`;
  return threadOf(new NodeWorkerClass(new URL(`data:text/javascript,${encodeURIComponent(boot)}`)));
}

function threadOf(worker: NodeWorker): GrammarThread {
  // A worker keeps the process alive only while a reply of it is awaited (`hold`): an idle one
  // does not, so a script that used structured output ends when its own work does.
  worker.unref();
  let ended = false;
  return {
    post: (message: GrammarRequest) => worker.postMessage(message),
    listen(onReply, onDeath) {
      worker.on('message', onReply);
      worker.on('error', (e) => onDeath(e.message));
      worker.on('exit', (code) => {
        if (!ended) onDeath(`the grammar worker exited (code ${code})`);
      });
      // A 'message' listener references the worker's port again.
      worker.unref();
    },
    hold: (waiting) => (waiting ? worker.ref() : worker.unref()),
    terminate: () => {
      ended = true;
      void worker.terminate();
    },
  };
}
