import * as Comlink from 'comlink';
import { errorFromWire, errorToWire, type ErrorWire } from './error-wire.ts';

/**
 * Errors cross the worker boundary as structured values, never as strings: a JevError keeps
 * its code, param and status; an AbortError stays an AbortError. Installed on both sides.
 */
export function installErrorTransfer(): void {
  const original = Comlink.transferHandlers.get('throw')!;
  Comlink.transferHandlers.set('throw', {
    canHandle: original.canHandle,
    serialize(value: unknown) {
      return [errorToWire((value as { value: unknown }).value), []];
    },
    deserialize(wire: unknown) {
      throw errorFromWire(wire as ErrorWire);
    },
  } as Comlink.TransferHandler<unknown, unknown>);
}
