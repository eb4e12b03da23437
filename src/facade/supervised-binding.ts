import * as Comlink from 'comlink';
import type { EngineBinding } from './engine-client.ts';
import type { EngineSupervisor } from './engine-supervisor.ts';

/**
 * A client's binding to an engine kept alive by `supervisor` behind a worker or a thread: calls go
 * to its live instance, callbacks cross as Comlink proxies, drills go through the supervisor (the
 * page's worker: client/create-client.ts; the server's engine thread: server/embedded-engine.ts).
 */
export function supervisedBinding(supervisor: EngineSupervisor): EngineBinding {
  return {
    api: supervisor.api,
    wrapCallback: (fn) => Comlink.proxy(fn),
    terminate: () => supervisor.terminate(),
    drill: (action) => supervisor.drill(action),
    restarts: () => supervisor.restarts,
  };
}
