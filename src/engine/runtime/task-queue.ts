/**
 * Runs tasks one at a time, in arrival order: the model serves one request at a time, and each
 * caller gets its own result. A task whose signal aborts while it waits is dropped from the queue.
 */
export class TaskQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #pending = 0;

  get pending(): number {
    return this.#pending;
  }

  run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    this.#pending += 1;
    const result = this.#tail.then(
      () => {
        signal?.throwIfAborted();
        return task();
      },
    );
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      this.#pending -= 1;
    });
    if (!signal) return result;
    // Reject at once when aborted while queued; the task itself is skipped when its turn comes.
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      result.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }
}
