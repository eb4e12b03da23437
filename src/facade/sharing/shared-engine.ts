import type { EngineApi, LoadEvent, LoadOptions } from '../../protocol/engine-api.ts';
import { newCallId } from '../call-id.ts';
import type { EngineBinding } from '../engine-client.ts';
import { ShareGroup, unavailable } from './share-group.ts';
import { shareKey } from './share-key.ts';
import type { ShareChannel, ShareLocks } from './share-protocol.ts';

export interface SharedEngineOptions {
  /** Starts this tab's own engine, when it is elected to host one. */
  spawn: () => EngineBinding;
  locks: ShareLocks;
  openChannel: (name: string) => ShareChannel;
  /** This tab's id (random by default). */
  tab?: string;
  /** Bytes of model weights the origin's shared engines may hold together (share-budget.ts); none by default. */
  budgetBytes?: number | undefined;
}

/**
 * An engine shared by the tabs of the origin that load the same model (`share: 'origin'`,
 * docs/sharing.md), behind the engine's own interface: the client over it is the client over a
 * lone engine. Loading another model leaves the first model's group (its engine, where this tab
 * hosted it, passes to the next tab) and joins the other's.
 */
export class SharedEngine {
  readonly tab: string;
  readonly binding: EngineBinding;
  readonly #o: SharedEngineOptions;
  #group: ShareGroup | null = null;
  #terminated = false;

  constructor(o: SharedEngineOptions) {
    this.#o = o;
    this.tab = o.tab ?? newCallId().replace(/^call_/, 'tab_');
    const api: EngineApi = {
      load: (options, onEvent) => this.#load(options, onEvent),
      status: async () => this.#current().status(),
      models: async () => this.#current().call({ method: 'models' }, newCallId()) as ReturnType<EngineApi['models']>,
      decide: async (body, call) => this.#current().call({ method: 'decide', body }, call.id) as ReturnType<EngineApi['decide']>,
      extract: async (body, call) => this.#current().call({ method: 'extract', body }, call.id) as ReturnType<EngineApi['extract']>,
      chat: async (body, call, onChunk) =>
        this.#current().call({ method: 'chat', body, stream: !!onChunk }, call.id, onChunk) as ReturnType<EngineApi['chat']>,
      cancel: async (id) => this.#group?.cancel(id),
      debug: async (action) => this.#current().call({ method: 'debug', action }, newCallId()) as Promise<boolean>,
      clearCache: async () => void (await this.#current().call({ method: 'clearCache' }, newCallId())),
      unload: async () => {
        const group = this.#current();
        this.#group = null;
        return group.unload();
      },
    };
    this.binding = {
      api,
      // Callbacks stay in this tab: the hosting group wraps them for its worker itself.
      wrapCallback: (fn) => fn,
      terminate: () => this.terminate(),
      drill: (action) => api.debug(action),
      restarts: () => this.#group?.restarts() ?? 0,
    };
  }

  /** Leaves for good: calls waiting fail with `engine_unavailable`; a hosted engine passes on. */
  terminate(): void {
    this.#terminated = true;
    this.#group?.leave(unavailable('The client was terminated.'));
    this.#group = null;
  }

  async #load(options: LoadOptions, onEvent?: (event: LoadEvent) => void) {
    if (this.#terminated) throw unavailable('The client was terminated.');
    const key = shareKey(options);
    if (this.#group?.key === key) return this.#group.load(onEvent, true);
    // As a lone engine does, the model that served goes on serving until the other one is ready:
    // a load refused or failed leaves this tab where it was.
    const previous = this.#group;
    const next = new ShareGroup({ tab: this.tab, key, options, onEvent, spawn: this.#o.spawn, locks: this.#o.locks, openChannel: this.#o.openChannel, budgetBytes: this.#o.budgetBytes });
    this.#group = next;
    let status: Awaited<ReturnType<ShareGroup['load']>>;
    try {
      status = await next.load(onEvent, false);
    } catch (e) {
      // With no model before it, the failed load is this tab's state (its calls get its error).
      if (previous && this.#group === next) {
        next.leave(unavailable('The load of another model failed; send the request again.'));
        this.#group = previous;
      }
      throw e;
    }
    previous?.leave(unavailable('This tab loaded another model meanwhile; send the request again.'));
    return status;
  }

  #current(): ShareGroup {
    if (this.#terminated) throw unavailable('The client was terminated.');
    if (!this.#group) throw unavailable('No model is loaded; call load() first.');
    return this.#group;
  }
}
