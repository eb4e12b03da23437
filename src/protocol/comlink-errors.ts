import * as Comlink from 'comlink';
import { JevError, type SerializedJevError } from '../contract/index.ts';

type Wire =
  | { kind: 'jev'; error: SerializedJevError }
  | { kind: 'abort'; message: string }
  | { kind: 'error'; name: string; message: string; stack?: string | undefined };

/**
 * Errors cross the worker boundary as structured values, never as strings: a JevError keeps
 * its code, param and status; an AbortError stays an AbortError. Installed on both sides.
 */
export function installErrorTransfer(): void {
  const original = Comlink.transferHandlers.get('throw')!;
  Comlink.transferHandlers.set('throw', {
    canHandle: original.canHandle,
    serialize(value: unknown) {
      const error = (value as { value: unknown }).value;
      let wire: Wire;
      if (JevError.is(error) && error.code !== 'aborted') wire = { kind: 'jev', error: error.toJSON() };
      else if (JevError.is(error) || (error instanceof Error && error.name === 'AbortError')) wire = { kind: 'abort', message: error.message };
      else if (error instanceof Error) wire = { kind: 'error', name: error.name, message: error.message, stack: error.stack };
      else wire = { kind: 'error', name: 'Error', message: String(error) };
      return [wire, []];
    },
    deserialize(wire: unknown) {
      const w = wire as Wire;
      if (w.kind === 'jev') throw JevError.fromJSON(w.error);
      if (w.kind === 'abort') throw new DOMException(w.message, 'AbortError');
      throw Object.assign(new Error(w.message), { name: w.name, stack: w.stack });
    },
  } as Comlink.TransferHandler<unknown, unknown>);
}
