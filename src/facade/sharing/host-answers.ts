import type { ChatCompletionChunk } from '../../contract/index.ts';
import { errorToWire } from '../../protocol/error-wire.ts';
import type { RelayedCall, ShareMessage } from './share-protocol.ts';

type Call = Extract<ShareMessage, { type: 'jev-share-call' }>;
type Cancel = Extract<ShareMessage, { type: 'jev-share-cancel' }>;

/** Runs one call on the engine this tab hosts. */
export type RunCall = (call: RelayedCall, id: string, onChunk?: (chunk: ChatCompletionChunk) => void) => Promise<unknown>;

/**
 * The hosting tab's side of the relay: each call another tab sends runs on this tab's engine,
 * as that tab's own call would (the same engine method, the same call id, so that its cancel
 * reaches it); its chunks, value or error go back to the tab that sent it. A call sent twice
 * (a tab that learnt of this host twice) runs once.
 */
export class HostAnswers {
  readonly #tab: string;
  readonly #post: (message: ShareMessage) => void;
  readonly #run: RunCall;
  readonly #cancel: (id: string) => Promise<void>;
  readonly #running = new Set<string>();

  constructor(tab: string, post: (message: ShareMessage) => void, run: RunCall, cancel: (id: string) => Promise<void>) {
    this.#tab = tab;
    this.#post = post;
    this.#run = run;
    this.#cancel = cancel;
  }

  onCall(message: Call): void {
    const { from, id, call } = message;
    const key = `${from}/${id}`;
    if (this.#running.has(key)) return;
    this.#running.add(key);
    const reply = { from: this.#tab, to: from, id };
    const onChunk =
      call.method === 'chat' && call.stream ? (chunk: ChatCompletionChunk) => this.#post({ type: 'jev-share-chunk', ...reply, chunk }) : undefined;
    let running: Promise<unknown>;
    try {
      running = this.#run(call, id, onChunk);
    } catch (e) {
      running = Promise.reject(e);
    }
    running
      .then(
        (value) => this.#post({ type: 'jev-share-result', ...reply, value }),
        (e: unknown) => this.#post({ type: 'jev-share-failure', ...reply, error: errorToWire(e) }),
      )
      .catch(() => undefined) // the channel closed meanwhile: this tab left
      .finally(() => this.#running.delete(key));
  }

  onCancel(message: Cancel): void {
    void this.#cancel(message.id).catch(() => undefined);
  }
}
