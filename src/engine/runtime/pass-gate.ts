/**
 * A gate in front of the model's forward passes, for tests and drills that need a request to be
 * still running when something happens (a page closes, a worker crashes, Stop is pressed): with
 * `hold(after)`, the request that next runs a pass (the one being served, or the next one) may run
 * `after` more passes, and its next one waits until `release()`; so the request is held open by
 * construction, not by a timing. A waiting pass keeps the worker's event loop free (it answers
 * pings, cancels and other calls). When the held request ends, whichever way (cancelled while
 * waiting, or stopped between passes, or finished), the gate opens by itself, so whatever was
 * queued behind it runs: a test that cancels the held request needs no release, and cannot
 * release too early.
 */
export class PassGate {
  /** Passes still allowed before the gate closes; null while open. */
  #allowance: number | null = null;
  /** The request the hold applies to: the first that reaches the gate after `hold`. */
  #owner: AbortSignal | null = null;
  #waiters = new Set<() => void>();

  get held(): boolean {
    return this.#allowance !== null;
  }

  hold(after: number): void {
    if (!Number.isInteger(after) || after < 0) throw new RangeError(`hold: after must be a whole number ≥ 0, not ${after}`);
    this.#allowance = after;
    this.#owner = null;
  }

  release(): void {
    this.#allowance = null;
    this.#owner = null;
    for (const wake of this.#waiters) wake();
    this.#waiters.clear();
  }

  /** The request with this signal has ended: if the hold was its own, the gate opens. */
  ended(signal: AbortSignal): void {
    if (this.#owner === signal) this.release();
  }

  /** Resolves when a pass of the request with `signal` may run; rejects with its reason if it aborts meanwhile. */
  async pass(signal: AbortSignal): Promise<void> {
    if (this.#allowance === null) return;
    this.#owner ??= signal;
    if (this.#allowance > 0) {
      this.#allowance -= 1;
      return;
    }
    signal.throwIfAborted();
    await new Promise<void>((resolve, reject) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.#waiters.delete(wake);
        this.ended(signal);
        reject(signal.reason);
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
