import type { ChatCompletionChunk } from '../../src/contract/index.ts';
import type { EngineBinding } from '../../src/facade/engine-client.ts';
import type { ShareChannel, ShareLocks } from '../../src/facade/sharing/share-protocol.ts';
import type { CallHandle, EngineApi, EngineStatus, LoadOptions } from '../../src/protocol/engine-api.ts';
import { idleStatus, noMemory } from '../../src/protocol/engine-api.ts';

interface Waiter {
  owner: string;
  name: string;
  grant: () => void;
}

/**
 * navigator.locks for several tabs of one origin, in one process: exclusive locks granted in
 * the order asked; a tab that crashes releases what it holds and drops what it waits for, as a
 * closed or crashed tab does in a browser.
 */
export class FakeLocks {
  readonly #held = new Map<string, { owner: string; release: () => void }>();
  readonly #queue: Waiter[] = [];

  view(owner: string): ShareLocks {
    return {
      request: (name, options, callback) =>
        new Promise((resolve, reject) => {
          const waiter: Waiter = {
            owner,
            name,
            grant: () => {
              options.signal?.removeEventListener('abort', onAbort);
              let released = false;
              const release = () => {
                if (released) return;
                released = true;
                if (this.#held.get(name)?.owner === owner) this.#held.delete(name);
                this.#next(name);
              };
              this.#held.set(name, { owner, release });
              callback({ name }).then(
                (v) => (release(), resolve(v)),
                (e) => (release(), reject(e)),
              );
            },
          };
          const onAbort = () => {
            const i = this.#queue.indexOf(waiter);
            if (i >= 0) this.#queue.splice(i, 1);
            reject(new DOMException('aborted', 'AbortError'));
          };
          if (options.signal?.aborted) return onAbort();
          options.signal?.addEventListener('abort', onAbort, { once: true });
          // (a request aborted after its grant keeps the lock: only waiting ones are dropped)
          this.#queue.push(waiter);
          this.#next(name);
        }),
      query: async () => ({
        held: [...this.#held].map(([name]) => ({ name })),
        pending: this.#queue.map((w) => ({ name: w.name })),
      }),
    };
  }

  /** The tab is gone: its locks are released, its requests dropped. */
  crash(owner: string): void {
    for (let i = this.#queue.length - 1; i >= 0; i--) if (this.#queue[i]!.owner === owner) this.#queue.splice(i, 1);
    for (const [, held] of [...this.#held]) if (held.owner === owner) held.release();
  }

  #next(name: string): void {
    if (this.#held.has(name)) return;
    const i = this.#queue.findIndex((w) => w.name === name);
    if (i < 0) return;
    const [waiter] = this.#queue.splice(i, 1);
    // Held from now on, though the callback runs a moment later (as the browser grants it).
    this.#held.set(name, { owner: waiter!.owner, release: () => {} });
    queueMicrotask(() => waiter!.grant());
  }
}

/** BroadcastChannels of one tab (Node's, which reach every other channel of the name in the process). */
export class TabChannels {
  readonly #open: BroadcastChannel[] = [];
  open = (name: string): ShareChannel => {
    const channel = new BroadcastChannel(name);
    this.#open.push(channel);
    return channel as unknown as ShareChannel;
  };
  closeAll(): void {
    for (const c of this.#open) c.close();
  }
}

/**
 * A stand-in engine: answers are a function of the body only (so that every engine answers
 * alike), every call is recorded, and calls may be held until released.
 */
export class FakeEngine {
  loads: LoadOptions[] = [];
  calls: string[] = [];
  cancelled: string[] = [];
  terminated = false;
  #gate: Promise<void> | null = null;
  #open: (() => void) | null = null;
  readonly #abort = new Map<string, () => void>();

  hold(): void {
    this.#gate = new Promise((r) => (this.#open = r));
  }
  release(): void {
    this.#open?.();
    this.#gate = null;
  }

  binding(): EngineBinding {
    let status: EngineStatus = idleStatus();
    const waitGate = async (id: string) => {
      const gate = this.#gate;
      if (!gate) return;
      await new Promise<void>((resolve, reject) => {
        this.#abort.set(id, () => reject(new DOMException('The request was aborted.', 'AbortError')));
        void gate.then(resolve);
      });
    };
    const api: EngineApi = {
      load: async (options) => {
        this.loads.push(options);
        status = { ...idleStatus(), state: 'ready', model: options.model, device: 'wasm', memory: { ...noMemory(), modelBytes: 1000 } };
        return status;
      },
      status: async () => status,
      models: async () => ({ object: 'list', data: [] }) as never,
      extract: async (body: unknown, call: CallHandle) => {
        this.calls.push(call.id);
        await waitGate(call.id);
        return { answers: { echo: JSON.stringify(body).length } } as never;
      },
      decide: async (body: unknown, call: CallHandle) => {
        this.calls.push(call.id);
        await waitGate(call.id);
        return { answers: { echo: JSON.stringify(body).length } } as never;
      },
      chat: async (body: unknown, call: CallHandle, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>) => {
        this.calls.push(call.id);
        const words = String((body as { text?: string }).text ?? '').split(' ');
        for (const [i, word] of words.entries()) {
          if (i === 1) await waitGate(call.id);
          await onChunk?.({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: word } }] } as never);
        }
        return { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: words.join(' ') } }] } as never;
      },
      cancel: async (id) => {
        this.cancelled.push(id);
        this.#abort.get(id)?.();
      },
      debug: async () => false,
      clearCache: async () => {},
      unload: async () => {
        const freed = status.memory;
        status = idleStatus();
        return { freed, status };
      },
    };
    return { api, wrapCallback: (fn) => fn, terminate: () => void (this.terminated = true) };
  }
}
