import type { MessagePort } from 'node:worker_threads';
import type { EngineHost } from '../engine/engine.ts';
import { isSupervisorMessage, type SupervisionMessage } from '../protocol/supervision.ts';

/**
 * The engine's host in a Node `worker_threads` Worker (engine-thread.ts; the page's is
 * engine/worker-host.ts): answers the watchdog's pings from the thread's event loop, reports
 * beats and faults to the supervisor, and runs the crash drills. Its `alive` says the thread's
 * entry has loaded (the watchdog starts then); Node sees a thread's death itself (the Worker's
 * `error` and `exit` events), so no lock is held.
 */
export function threadHost(port: MessagePort): EngineHost {
  const post = (message: SupervisionMessage) => port.postMessage(message);
  port.on('message', (message: unknown) => {
    if (isSupervisorMessage(message)) post({ type: 'jev-engine-pong', seq: message.seq });
  });
  // The entry has loaded and pings are answered from here on: the supervisor's watchdog starts.
  post({ type: 'jev-engine-alive', lock: 'thread' });
  return {
    fault: (fault) => post({ type: 'jev-engine-fault', fault }),
    beat: (beat) => post({ type: 'jev-engine-beat', beat }),
    crash(mode) {
      // After this call's reply has gone out.
      setTimeout(() => {
        if (mode === 'exit') process.exit(0); // in a Worker: ends this thread only
        else if (mode === 'hang') for (;;) { /* alive but stuck: only the watchdog can end this */ }
        else throw new Error('jev debug: a simulated crash of the engine thread');
      }, 0);
      return true;
    },
  };
}
