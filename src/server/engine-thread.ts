import { Worker } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { EngineDeath, EngineInstance } from '../facade/engine-supervisor.ts';
import { HANG_DEFAULTS, startWatchdog, type HangWatchdogOptions, type WatchdogHandle } from '../facade/hang-watchdog.ts';
import type { EngineApi } from '../protocol/engine-api.ts';
import { isSupervisionMessage, type SupervisorMessage } from '../protocol/supervision.ts';
import { threadExecArgv } from '../engine/runtime/node-thread-argv.ts';

/** What the engine's thread is started with (its `workerData`): plain data, read by embedded-engine.ts' `threadEngine`. */
export interface EngineThreadData {
  model: string;
  /** A folder in the hub layout holding `{model}/config.json` and `{model}/onnx/…`. */
  root: string;
  /** Compute threads (`--threads`); unset: onnxruntime-node's default, every core. */
  threads?: number;
  /** `--device cuda`: onnxruntime-node's CUDA execution provider (src/server/cuda-provider.ts); unset: its CPU provider. */
  device?: 'cuda';
  prefixCacheBytes?: number;
}

/** Whether this module runs from the built server (dist/lib/server.js), not the TypeScript sources. */
function runsBuilt(): boolean {
  return !/\.[cm]?ts$/.test(new URL(import.meta.url).pathname);
}

/**
 * The thread's entry: from the built server (the published package), its build beside it,
 * dist/lib/engine-thread.js (vite.server.config.ts, `--mode engine-thread`), a plain module; in a
 * checkout, worker/engine.worker.node.ts, run through tsx.
 */
export function engineThreadEntry(): URL {
  // Not literals: Vite would emit them as assets.
  const path = runsBuilt() ? ['.', 'engine-thread.js'] : ['..', '..', 'worker', 'engine.worker.node.ts'];
  return new URL(path.join('/'), import.meta.url);
}

/**
 * The engine in a Node `worker_threads` Worker (worker/engine.worker.node.ts), as the facade's
 * EngineSupervisor sees it — the Node counterpart of facade/worker-instance.ts: its API through
 * Comlink over the thread's port, and its death, seen three ways:
 * - the Worker's `error` event: an uncaught error in the thread;
 * - its `exit` event: the thread ended (closed itself, or was terminated);
 * - the hang watchdog (facade/hang-watchdog.ts): the thread left a ping unanswered longer than
 *   what it was doing may take (pings and beats: src/server/thread-host.ts), or its entry did not
 *   load within `loadAfterMs`. The supervisor then terminates it and starts another, as in the page.
 * Node's `terminate()` stops a thread looping in JavaScript at once; one inside a native call
 * (an onnxruntime-node run) is stopped when that call returns.
 */
export function engineThread(data: EngineThreadData, watch: HangWatchdogOptions = {}): EngineInstance {
  const entry = engineThreadEntry();
  // In a checkout, tsx's loader, registered inside the thread, reads the TypeScript entry and what it imports (as the grammar thread does).
  const boot = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); })`;
  const worker = runsBuilt()
    ? new Worker(entry, { workerData: data, name: 'jev-engine', execArgv: threadExecArgv(process.execArgv) })
    : new Worker(boot, { eval: true, workerData: data, name: 'jev-engine' });
  // The server keeps the process alive while it listens; an engine thread alone does not.
  worker.unref();
  const api = Comlink.wrap<EngineApi>(nodeEndpoint(worker)) as unknown as EngineApi;
  let settle!: (death: EngineDeath) => void;
  let dead = false;
  const died = new Promise<EngineDeath>((resolve) => {
    settle = (death) => {
      if (dead) return;
      dead = true;
      resolve(death);
    };
  });
  // The watchdog starts once the thread's entry has loaded and answers pings (its `alive`): the
  // import of the engine's modules, slow on a loaded machine, is given the time of a model load.
  let watchdog: WatchdogHandle | null = null;
  const startWithin = setTimeout(
    () => settle({ type: 'hung', message: `the engine thread did not start within ${Math.round((watch.loadAfterMs ?? HANG_DEFAULTS.loadAfterMs) / 1000)} s` }),
    watch.loadAfterMs ?? HANG_DEFAULTS.loadAfterMs,
  );
  const watch_ = () =>
    startWatchdog(
      watch,
      (seq) => worker.postMessage({ type: 'jev-engine-ping', seq } satisfies SupervisorMessage),
      (message) => settle({ type: 'hung', message: message.replace('engine worker', 'engine thread') }),
    );
  const stop = () => {
    clearTimeout(startWithin);
    watchdog?.stop();
  };
  void died.then(stop);
  const onMessage = (message: unknown) => {
    if (!isSupervisionMessage(message)) return;
    switch (message.type) {
      case 'jev-engine-beat':
        watchdog?.beat(message.beat);
        break;
      case 'jev-engine-pong':
        watchdog?.pong();
        break;
      case 'jev-engine-fault':
        settle({ type: message.fault.type, message: message.fault.message });
        break;
      case 'jev-engine-alive':
        // The thread's entry has loaded (a thread's end is its `exit` event; the lock is a web worker's).
        if (!dead && !watchdog) {
          clearTimeout(startWithin);
          watchdog = watch_();
        }
        break;
      default: {
        const never: never = message;
        void never;
      }
    }
  };
  const onError = (error: Error) => settle({ type: 'crashed', message: `the engine thread crashed: ${error.message}` });
  const onExit = (code: number) => settle({ type: 'exited', message: `the engine thread stopped (exit code ${code})` });
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  return {
    api,
    died,
    terminate() {
      stop();
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      void worker.terminate();
    },
  };
}
