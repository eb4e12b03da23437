import type { ChatCompletionChunk } from '../../contract/index.ts';
import { JevError } from '../../contract/index.ts';
import { idleStatus, noMemory, type EngineStatus, type LoadEvent, type LoadOptions, type UnloadReport } from '../../protocol/engine-api.ts';
import { newCallId } from '../call-id.ts';
import type { EngineBinding } from '../engine-client.ts';
import { HostAnswers } from './host-answers.ts';
import { RelayedCalls } from './relayed-calls.ts';
import { budgetRefusal, holdModelBytes, otherEnginesBytes } from './share-budget.ts';
import { channelName, hostLockName } from './share-key.ts';
import { isShareMessage, type RelayedCall, type ShareChannel, type ShareLocks, type ShareMessage } from './share-protocol.ts';

export interface ShareGroupOptions {
  tab: string;
  key: string;
  options: LoadOptions;
  onEvent: ((event: LoadEvent) => void) | undefined;
  /** Starts this tab's own engine (a supervised worker), once it is elected to host. */
  spawn: () => EngineBinding;
  locks: ShareLocks;
  openChannel: (name: string) => ShareChannel;
  /** Bytes of model weights the engines shared by this origin's tabs may hold together (share-budget.ts). */
  budgetBytes: number | undefined;
}

/**
 * This tab's place among the tabs of the origin that use one model (one `shareKey`). Every tab
 * asks for the model's Web Lock; the one holding it hosts the engine (a supervised worker, as
 * with `share: 'tab'`) for as long as it lives, and the others wait in the lock's queue. Their
 * calls go to the host over a BroadcastChannel (relayed-calls.ts, host-answers.ts). A tab that
 * closes or crashes releases its lock: the next tab in the queue is granted it, starts its own
 * engine, loads the model (from the browser's cache: the files were fetched once) and tells the
 * others, whose calls then go to it.
 */
export class ShareGroup {
  readonly key: string;
  readonly #tab: string;
  readonly #lock: string;
  readonly #options: LoadOptions;
  readonly #onEvent: ((event: LoadEvent) => void) | undefined;
  readonly #spawn: () => EngineBinding;
  readonly #locks: ShareLocks;
  readonly #channel: ShareChannel;
  readonly #abort = new AbortController();
  readonly #calls: RelayedCalls;
  readonly #answers: HostAnswers;
  /** The hosting tab, this one included; null until one is known. */
  #host: string | null = null;
  #local: EngineBinding | null = null;
  #hostLoad: Promise<EngineStatus> | null = null;
  #release: (() => void) | null = null;
  #releaseBytes: (() => void) | null = null;
  readonly #budget: number | undefined;
  /** The last load passed the budget: the engine was unloaded, and every call is refused so. */
  #refused: JevError | null = null;
  #left = false;

  constructor(o: ShareGroupOptions) {
    this.key = o.key;
    this.#tab = o.tab;
    this.#lock = hostLockName(o.key);
    this.#options = o.options;
    this.#onEvent = o.onEvent;
    this.#spawn = o.spawn;
    this.#locks = o.locks;
    this.#budget = o.budgetBytes;
    this.#channel = o.openChannel(channelName(o.key));
    const post = (message: ShareMessage) => this.#channel.postMessage(message);
    this.#calls = new RelayedCalls(o.tab, post);
    this.#answers = new HostAnswers(o.tab, post, (call, id, onChunk) => this.#runHere(call, id, onChunk), (id) => this.#cancelHere(id));
    this.#channel.onmessage = (event) => {
      if (isShareMessage(event.data)) this.#onMessage(event.data);
    };
    this.#locks
      .request(this.#lock, { signal: this.#abort.signal }, () => {
        if (this.#left) return Promise.resolve();
        return new Promise<void>((release) => {
          this.#release = release;
          this.#becomeHost();
        });
      })
      .catch(() => undefined); // aborted: this tab left before its turn
    post({ type: 'jev-share-hello', from: o.tab });
  }

  get hosting(): boolean {
    return this.#host === this.#tab;
  }

  /** Fault drills' restart count: this tab's engine's, where it hosts one. */
  restarts(): number {
    return this.#local?.restarts?.() ?? 0;
  }

  /** One engine call: on this tab's engine where it hosts, else on the host's. */
  call(call: RelayedCall, id: string, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>): Promise<unknown> {
    if (this.#left) return Promise.reject(unavailable('This tab left the shared engine; load a model again.'));
    if (this.hosting) return this.#runHere(call, id, onChunk);
    return this.#calls.add(id, call, onChunk, this.#host);
  }

  async cancel(id: string): Promise<void> {
    if (this.hosting) return this.#cancelHere(id);
    this.#calls.cancel(id);
  }

  /**
   * Resolves once the model is loaded: by this tab where it hosts (`again`: a new load of the
   * same model, e.g. after a failed one), else by the host.
   */
  async load(onEvent: ((event: LoadEvent) => void) | undefined, again: boolean): Promise<EngineStatus> {
    if (again && this.hosting && this.#local) this.#hostLoad = this.#loadHere(onEvent);
    const status = (await this.call({ method: 'load' }, newCallId())) as EngineStatus;
    if (!this.hosting) onEvent?.({ type: 'ready', status: this.#asSeenHere(status) });
    return status;
  }

  async status(): Promise<EngineStatus> {
    return this.#asSeenHere((await this.call({ method: 'status' }, newCallId())) as EngineStatus);
  }

  /**
   * Leaves the engine: where this tab hosts it, frees the model first (and reports what was
   * freed); the next tab in the queue takes over. A tab that does not host frees nothing.
   */
  async unload(): Promise<UnloadReport> {
    const local = this.hosting ? this.#local : null;
    const report = local ? await local.api.unload() : { freed: noMemory(), status: idleStatus() };
    this.leave(unavailable('The model was unloaded; call load() first.'));
    return report;
  }

  /** Stops taking part: calls waiting on the host fail with `error`; a hosted engine stops. */
  leave(error: JevError): void {
    if (this.#left) return;
    this.#left = true;
    this.#abort.abort();
    this.#calls.failAll(error);
    this.#local?.terminate();
    this.#local = null;
    this.#host = null;
    this.#releaseBytes?.();
    this.#release?.();
    this.#channel.onmessage = null;
    this.#channel.close();
  }

  #onMessage(message: ShareMessage): void {
    if (this.#left) return;
    switch (message.type) {
      case 'jev-share-hello':
        if (this.hosting) this.#channel.postMessage({ type: 'jev-share-host', from: this.#tab });
        break;
      case 'jev-share-host':
        if (message.from === this.#host || this.hosting) break;
        this.#host = message.from;
        this.#calls.sendAll(message.from);
        break;
      case 'jev-share-call':
        if (message.to === this.#tab && this.hosting) this.#answers.onCall(message);
        break;
      case 'jev-share-cancel':
        if (message.to === this.#tab && this.hosting) this.#answers.onCancel(message);
        break;
      case 'jev-share-chunk':
      case 'jev-share-result':
      case 'jev-share-failure':
        if (message.to === this.#tab) this.#calls.onReply(message);
        break;
      default: {
        const never: never = message;
        void never;
      }
    }
  }

  /** Granted the lock: the previous host (if any) is gone. This tab's engine starts and loads. */
  #becomeHost(): void {
    this.#host = this.#tab;
    this.#local = this.#spawn();
    this.#hostLoad = this.#loadHere(this.#onEvent);
    this.#channel.postMessage({ type: 'jev-share-host', from: this.#tab });
    for (const pending of this.#calls.takeOver()) this.#runHere(pending.call, pending.id, pending.onChunk).then(pending.resolve, pending.reject);
  }

  #loadHere(onEvent: ((event: LoadEvent) => void) | undefined): Promise<EngineStatus> {
    const loading = this.#loadWithinBudget(this.#local!, onEvent);
    loading.catch(() => undefined); // surfaced through every call that waits for it
    return loading;
  }

  /**
   * Loads the model, then holds a lock that states its bytes, for as long as this tab hosts it.
   * Where a budget is set and the engines of the origin's other models already hold so much that
   * this one would pass it, the model is unloaded again and the load refused.
   */
  async #loadWithinBudget(local: EngineBinding, onEvent: ((event: LoadEvent) => void) | undefined): Promise<EngineStatus> {
    this.#refused = null;
    this.#releaseBytes?.();
    this.#releaseBytes = null;
    const status = await local.api.load(this.#options, onEvent ? local.wrapCallback(onEvent) : undefined);
    const bytes = status.memory.modelBytes;
    if (this.#budget !== undefined) {
      const others = await otherEnginesBytes(this.#locks, this.key);
      if (others + bytes > this.#budget) {
        await local.api.unload().catch(() => undefined);
        this.#refused = budgetRefusal(this.#options, bytes, others, this.#budget);
        throw this.#refused;
      }
    }
    if (!this.#left && this.#local === local) this.#releaseBytes = holdModelBytes(this.#locks, this.key, bytes);
    return status;
  }

  #runHere(call: RelayedCall, id: string, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>): Promise<unknown> {
    const local = this.#local;
    if (!local || !this.#hostLoad) return Promise.reject(unavailable('This tab no longer hosts the engine; send the request again.'));
    if (this.#refused && call.method !== 'load' && call.method !== 'status') return Promise.reject(this.#refused);
    switch (call.method) {
      case 'load':
        return this.#hostLoad;
      case 'status':
        return this.#hostStatus(local);
      case 'models':
        return local.api.models();
      case 'decide':
        return local.api.decide(call.body, { id });
      case 'extract':
        return local.api.extract(call.body, { id });
      case 'chat':
        return local.api.chat(call.body, { id }, onChunk ? local.wrapCallback(onChunk) : undefined);
      case 'clearCache':
        return local.api.clearCache();
      case 'debug':
        return local.drill ? local.drill(call.action) : local.api.debug(call.action);
      default: {
        const never: never = call;
        return Promise.reject(new Error(`unknown call ${String(never)}`));
      }
    }
  }

  async #cancelHere(id: string): Promise<void> {
    await this.#local?.api.cancel(id);
  }

  async #hostStatus(local: EngineBinding): Promise<EngineStatus> {
    const [status, queue] = await Promise.all([local.api.status(), this.#locks.query().catch(() => ({ pending: [] }))]);
    const waiting = (queue.pending ?? []).filter((lock) => lock.name === this.#lock).length;
    return { ...status, sharing: { mode: 'origin', tab: this.#tab, host: this.#tab, hosting: true, tabs: 1 + waiting } };
  }

  /** The host's status, as this tab's: its `sharing` names this tab. */
  #asSeenHere(status: EngineStatus): EngineStatus {
    if (!status.sharing) return status;
    return { ...status, sharing: { ...status.sharing, tab: this.#tab, hosting: status.sharing.host === this.#tab } };
  }
}

export function unavailable(message: string): JevError {
  return new JevError('engine_unavailable', message, { param: null });
}
