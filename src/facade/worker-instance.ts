import * as Comlink from 'comlink';
import type { EngineApi } from '../protocol/engine-api.ts';
import { isSupervisionMessage, type SupervisorMessage } from '../protocol/supervision.ts';
import type { EngineDeath, EngineInstance } from './engine-supervisor.ts';
import { startWatchdog, type HangWatchdogOptions } from './hang-watchdog.ts';

/**
 * An engine in a Web Worker, as the supervisor sees it: its API through Comlink, and its death.
 * A death is seen four ways:
 * - an `error` event: an uncaught error in the worker (marked handled: the supervisor deals with it);
 * - the worker's Web Lock granted to this page: the worker is gone (closed itself, or was killed);
 * - a `fault` message: the engine cannot go on there (its WebGPU device was lost);
 * - the hang watchdog: the worker left a ping unanswered longer than what it was doing may take
 *   (a busy worker, in a long prefill or a load, is given the time that work needs; see
 *   hang-watchdog.ts). It is then terminated by the supervisor like any dead instance.
 */
export function workerInstance(worker: Worker, watch: HangWatchdogOptions = {}): EngineInstance {
  const api = Comlink.wrap<EngineApi>(worker) as unknown as EngineApi;
  let settle!: (death: EngineDeath) => void;
  let dead = false;
  const died = new Promise<EngineDeath>((resolve) => {
    settle = (death) => {
      if (dead) return;
      dead = true;
      resolve(death);
    };
  });
  const onError = (event: Event) => {
    event.preventDefault();
    const message = event instanceof ErrorEvent && event.message ? event.message : 'the engine worker failed to start or threw an uncaught error';
    settle({ type: 'crashed', message: `the engine worker crashed: ${message}` });
  };
  const watchdog = startWatchdog(
    watch,
    (seq) => worker.postMessage({ type: 'jev-engine-ping', seq } satisfies SupervisorMessage),
    (message) => settle({ type: 'hung', message }),
  );
  void died.then(() => watchdog.stop());
  const onMessage = (event: MessageEvent) => {
    const message: unknown = event.data;
    if (!isSupervisionMessage(message)) return;
    switch (message.type) {
      case 'jev-engine-beat':
        watchdog.beat(message.beat);
        break;
      case 'jev-engine-pong':
        watchdog.pong();
        break;
      case 'jev-engine-alive':
        // Granted only once the worker no longer holds it.
        void navigator.locks
          ?.request(message.lock, () => settle({ type: 'exited', message: 'the engine worker stopped' }))
          .catch(() => undefined);
        break;
      case 'jev-engine-fault':
        settle({ type: message.fault.type, message: message.fault.message });
        break;
      default: {
        const never: never = message;
        void never;
      }
    }
  };
  worker.addEventListener('error', onError);
  worker.addEventListener('message', onMessage);
  return {
    api,
    died,
    terminate() {
      // Its lock, once released, still settles `died`: the supervisor ignores a retired instance.
      watchdog.stop();
      worker.removeEventListener('error', onError);
      worker.removeEventListener('message', onMessage);
      worker.terminate();
    },
  };
}
