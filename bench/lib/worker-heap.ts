import type { CDPSession, Page } from 'playwright-core';

/**
 * Samples the JS heap of the page's dedicated worker (where the engine runs) over the Chrome
 * DevTools Protocol: Runtime.getHeapUsage gives the V8 heap in use and the bytes of ArrayBuffer
 * backing stores (tensors copied out of wasm live there). Workers are reached by auto-attaching
 * to the page's target and relaying messages (Target.sendMessageToTarget), since Playwright's
 * CDPSession addresses only its own target.
 */
export class WorkerHeap {
  #cdp: CDPSession | null = null;
  #sessions: string[] = [];
  #pending = new Map<number, (v: { result?: { usedSize: number; backingStorageSize?: number } }) => void>();
  #id = 0;
  #timer: NodeJS.Timeout | null = null;
  #busy = false;
  #peak = { heap: 0, buffers: 0 };
  #ok = false;

  async attach(page: Page): Promise<void> {
    try {
      const cdp = await page.context().newCDPSession(page);
      this.#cdp = cdp;
      const on = cdp.on.bind(cdp) as unknown as (event: string, handler: (e: never) => void) => void;
      on('Target.attachedToTarget', (e: { sessionId: string; targetInfo: { type: string } }) => {
        if (e.targetInfo.type === 'worker') this.#sessions.push(e.sessionId);
      });
      on('Target.detachedFromTarget', (e: { sessionId: string }) => {
        this.#sessions = this.#sessions.filter((s) => s !== e.sessionId);
      });
      on('Target.receivedMessageFromTarget', (e: { message: string }) => {
        const m = JSON.parse(e.message) as { id?: number; result?: { usedSize: number; backingStorageSize?: number } };
        if (m.id !== undefined) this.#pending.get(m.id)?.(m);
      });
      const send = cdp.send.bind(cdp) as (method: string, params?: object) => Promise<unknown>;
      await send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: false });
      this.#ok = true;
    } catch {
      this.#ok = false;
    }
  }

  get available(): boolean {
    return this.#ok && this.#sessions.length > 0;
  }

  start(intervalMs = 500): void {
    this.#timer = setInterval(() => void this.sample(), intervalMs);
    this.#timer.unref();
  }

  async sample(): Promise<void> {
    if (!this.#cdp || this.#busy || this.#sessions.length === 0) return;
    this.#busy = true;
    try {
      const send = this.#cdp.send.bind(this.#cdp) as (method: string, params?: object) => Promise<unknown>;
      for (const sessionId of this.#sessions) {
        const id = ++this.#id;
        const reply = new Promise<{ result?: { usedSize: number; backingStorageSize?: number } }>((resolve) => {
          this.#pending.set(id, resolve);
          setTimeout(() => resolve({}), 60_000).unref();
        });
        await send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method: 'Runtime.getHeapUsage' }) });
        const r = (await reply).result;
        this.#pending.delete(id);
        if (r) {
          this.#peak.heap = Math.max(this.#peak.heap, r.usedSize);
          this.#peak.buffers = Math.max(this.#peak.buffers, r.backingStorageSize ?? 0);
        }
      }
    } catch {
      /* the page is closing */
    } finally {
      this.#busy = false;
    }
  }

  /** Peaks since the previous mark; null when no worker could be observed. */
  mark(): { heap: number; buffers: number } | null {
    const p = this.#peak;
    this.#peak = { heap: 0, buffers: 0 };
    return p.heap > 0 ? p : null;
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#cdp?.detach().catch(() => undefined);
  }
}
