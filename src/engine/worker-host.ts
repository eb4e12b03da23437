/// <reference lib="webworker" />
import { isSupervisorMessage, type SupervisionMessage } from '../protocol/supervision.ts';
import type { EngineHost } from './engine.ts';

/**
 * The engine's host in a dedicated worker: holds a Web Lock for as long as the worker lives
 * (the supervisor is granted it only once the worker is gone), answers the watchdog's pings,
 * reports beats and faults to the supervisor, and runs the crash drills. See
 * protocol/supervision.ts.
 */
export function workerHost(scope: DedicatedWorkerGlobalScope): EngineHost {
  const post = (message: SupervisionMessage) => scope.postMessage(message);
  const lock = `jev-engine-${crypto.randomUUID()}`;
  void scope.navigator.locks
    ?.request(lock, () => {
      post({ type: 'jev-engine-alive', lock });
      return new Promise<never>(() => {});
    })
    .catch(() => undefined);
  scope.addEventListener('message', (event: MessageEvent) => {
    if (isSupervisorMessage(event.data)) post({ type: 'jev-engine-pong', seq: event.data.seq });
  });
  return {
    fault: (fault) => post({ type: 'jev-engine-fault', fault }),
    beat: (beat) => post({ type: 'jev-engine-beat', beat }),
    crash(mode) {
      // After this call's reply has gone out.
      setTimeout(() => {
        if (mode === 'exit') scope.close();
        else if (mode === 'hang') for (;;) { /* alive but stuck: only the watchdog can end this */ }
        else throw new Error('jev debug: a simulated crash of the engine worker');
      }, 0);
      return true;
    },
  };
}
