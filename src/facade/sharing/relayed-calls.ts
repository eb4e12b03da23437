import type { ChatCompletionChunk } from '../../contract/index.ts';
import { JevError } from '../../contract/index.ts';
import { errorFromWire } from '../../protocol/error-wire.ts';
import type { RelayedCall, ShareMessage } from './share-protocol.ts';

/** A call this tab sent (or will send) to the tab that hosts the engine. */
export interface PendingCall {
  id: string;
  call: RelayedCall;
  onChunk: ((chunk: ChatCompletionChunk) => void | Promise<void>) | undefined;
  /** The host it was sent to (null: none known yet). */
  sentTo: string | null;
  /** A chunk came back: the stream began, so it cannot be sent again without repeating text. */
  started: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

type Reply = Extract<ShareMessage, { type: 'jev-share-chunk' | 'jev-share-result' | 'jev-share-failure' }>;

/**
 * The calls of a tab that does not host the engine, until the host answers them. When the host
 * changes (it closed or crashed, and another tab took over), a call that had not begun to stream
 * is sent again to the new host; one that had fails with `engine_unavailable`, which says to send
 * it again: no call waits on a host that is gone.
 */
export class RelayedCalls {
  readonly #tab: string;
  readonly #post: (message: ShareMessage) => void;
  readonly #calls = new Map<string, PendingCall>();

  constructor(tab: string, post: (message: ShareMessage) => void) {
    this.#tab = tab;
    this.#post = post;
  }

  get size(): number {
    return this.#calls.size;
  }

  /** Sends `call` to `host` (or holds it until a host is known); settles with the host's answer. */
  add(id: string, call: RelayedCall, onChunk: PendingCall['onChunk'], host: string | null): Promise<unknown> {
    return new Promise<unknown>((resolve, reject) => {
      const pending: PendingCall = { id, call, onChunk, sentTo: null, started: false, resolve, reject };
      this.#calls.set(id, pending);
      if (host !== null) this.#send(pending, host);
    });
  }

  /** A (new) host is known: calls not sent to it go there, or fail where they had begun to stream. */
  sendAll(host: string): void {
    for (const pending of [...this.#calls.values()]) {
      if (pending.sentTo === host) continue;
      if (pending.started) this.#fail(pending, handoverError());
      else this.#send(pending, host);
    }
  }

  /**
   * This tab became the host: its calls are now its own to run. Those that had begun to stream
   * fail; the others are returned, to be run here.
   */
  takeOver(): PendingCall[] {
    const mine: PendingCall[] = [];
    for (const pending of [...this.#calls.values()]) {
      this.#calls.delete(pending.id);
      if (pending.started) pending.reject(handoverError());
      else mine.push(pending);
    }
    return mine;
  }

  /** A reply from the host the call was sent to (others, from a host since replaced, are ignored). */
  onReply(message: Reply): void {
    const pending = this.#calls.get(message.id);
    if (!pending || pending.sentTo !== message.from) return;
    switch (message.type) {
      case 'jev-share-chunk':
        pending.started = true;
        void pending.onChunk?.(message.chunk);
        break;
      case 'jev-share-result':
        this.#calls.delete(pending.id);
        pending.resolve(message.value);
        break;
      case 'jev-share-failure':
        this.#calls.delete(pending.id);
        pending.reject(errorFromWire(message.error));
        break;
      default: {
        const never: never = message;
        void never;
      }
    }
  }

  /** Drops a call (the caller stopped waiting): never sent again; the host is told to stop it. */
  cancel(id: string): void {
    const pending = this.#calls.get(id);
    if (!pending) return;
    this.#calls.delete(id);
    if (pending.sentTo !== null) this.#post({ type: 'jev-share-cancel', from: this.#tab, to: pending.sentTo, id });
    pending.reject(new DOMException('The request was aborted.', 'AbortError'));
  }

  /** Fails every call (this tab leaves the engine: another model, unload, terminate). */
  failAll(error: JevError): void {
    for (const pending of [...this.#calls.values()]) this.#fail(pending, error);
  }

  #send(pending: PendingCall, host: string): void {
    pending.sentTo = host;
    this.#post({ type: 'jev-share-call', from: this.#tab, to: host, id: pending.id, call: pending.call });
  }

  #fail(pending: PendingCall, error: JevError): void {
    this.#calls.delete(pending.id);
    pending.reject(error);
  }
}

/** A streamed answer cut by the host's end: the request may be sent again as it is. */
export function handoverError(): JevError {
  return new JevError(
    'engine_unavailable',
    'The tab that hosted the engine closed while streaming this response; another tab took over: send the request again.',
    { param: null, details: { handover: true } },
  );
}
