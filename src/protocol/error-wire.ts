import { JevError, type SerializedJevError } from '../contract/index.ts';

/**
 * An error as a structured-clone-safe value, for every boundary it crosses (a worker through
 * Comlink, another tab through a BroadcastChannel): a JevError keeps its code, param and status;
 * an AbortError stays an AbortError; anything else keeps its name and message.
 */
export type ErrorWire =
  | { kind: 'jev'; error: SerializedJevError }
  | { kind: 'abort'; message: string }
  | { kind: 'error'; name: string; message: string; stack?: string | undefined };

export function errorToWire(error: unknown): ErrorWire {
  if (JevError.is(error) && error.code !== 'aborted') return { kind: 'jev', error: error.toJSON() };
  if (JevError.is(error) || (error instanceof Error && error.name === 'AbortError')) return { kind: 'abort', message: error.message };
  if (error instanceof Error) return { kind: 'error', name: error.name, message: error.message, stack: error.stack };
  return { kind: 'error', name: 'Error', message: String(error) };
}

/** The error `errorToWire` was given, rebuilt on this side. */
export function errorFromWire(wire: ErrorWire): Error {
  switch (wire.kind) {
    case 'jev':
      return JevError.fromJSON(wire.error);
    case 'abort':
      return new DOMException(wire.message, 'AbortError');
    case 'error':
      return Object.assign(new Error(wire.message), { name: wire.name, stack: wire.stack });
    default: {
      const never: never = wire;
      return new Error(String(never));
    }
  }
}
