/**
 * The wire between the engine's worker and the facade's supervisor, beside Comlink's messages
 * (Comlink's carry an `id`, these carry none, so each side's Comlink ignores them).
 *
 * - `alive`: the worker holds the Web Lock named `lock` for as long as it lives; the
 *   supervisor asks for the same lock, and is granted it only once the worker is gone (closed,
 *   crashed, or terminated), which is how a death without an `error` event is seen.
 * - `fault`: the engine cannot go on in this worker (its WebGPU device was lost).
 */
export type EngineFault = { type: 'device-lost'; message: string };

export type SupervisionMessage =
  | { type: 'jev-engine-alive'; lock: string }
  | { type: 'jev-engine-fault'; fault: EngineFault };

export function isSupervisionMessage(x: unknown): x is SupervisionMessage {
  if (typeof x !== 'object' || x === null) return false;
  const type = (x as { type?: unknown }).type;
  return type === 'jev-engine-alive' || type === 'jev-engine-fault';
}
