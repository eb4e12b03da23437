/**
 * The wire between the engine's worker and the facade's supervisor, beside Comlink's messages
 * (Comlink's carry an `id`, these carry none, so each side's Comlink ignores them).
 *
 * Worker → page:
 * - `alive`: the worker holds the Web Lock named `lock` for as long as it lives; the
 *   supervisor asks for the same lock, and is granted it only once the worker is gone (closed,
 *   crashed, or terminated), which is how a death without an `error` event is seen.
 * - `fault`: the engine cannot go on in this worker (its WebGPU device was lost).
 * - `beat`: a sign of life with what the engine is doing: a forward pass of `tokens` tokens
 *   begins or ends, a model load begins or ends (the worker's thread may be busy in between, so
 *   the watchdog gives it time in proportion to the work; facade/hang-watchdog.ts).
 * - `pong`: the answer to a `ping`, sent from the worker's event loop.
 *
 * Page → worker:
 * - `ping`: answered with `pong` whenever the worker's event loop is free.
 */
export type EngineFault = { type: 'device-lost'; message: string };

export type EngineBeat =
  | { type: 'pass-start'; tokens: number }
  | { type: 'pass-end'; tokens: number; ms: number }
  | { type: 'load-start' }
  | { type: 'load-end' };

export type SupervisionMessage =
  | { type: 'jev-engine-alive'; lock: string }
  | { type: 'jev-engine-fault'; fault: EngineFault }
  | { type: 'jev-engine-beat'; beat: EngineBeat }
  | { type: 'jev-engine-pong'; seq: number };

export type SupervisorMessage = { type: 'jev-engine-ping'; seq: number };

const WORKER_TYPES: ReadonlySet<unknown> = new Set(['jev-engine-alive', 'jev-engine-fault', 'jev-engine-beat', 'jev-engine-pong']);

export function isSupervisionMessage(x: unknown): x is SupervisionMessage {
  if (typeof x !== 'object' || x === null) return false;
  return WORKER_TYPES.has((x as { type?: unknown }).type);
}

export function isSupervisorMessage(x: unknown): x is SupervisorMessage {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as { type?: unknown; seq?: unknown };
  return m.type === 'jev-engine-ping' && typeof m.seq === 'number';
}
