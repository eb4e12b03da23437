/** What the ledger needs of a tensor: transformers.js' `Tensor` (or an onnxruntime one) fits. */
export interface Disposable {
  dispose(): void;
}

/**
 * Counts the tensors a model's owner holds: each tensor it creates, or receives from the model,
 * is `track`ed once, and counted until its first `dispose()`. A count that does not return to
 * its baseline after a request is a leak (GPU buffers or wasm heap that are never freed).
 *
 * Tracking wraps the tensor's own `dispose`, so every way a tensor is released (by the engine,
 * by a cache, by a caller that received it) is counted without each of them reporting it.
 */
export class TensorLedger {
  #live = 0;
  #tracked = 0;
  readonly #seen = new WeakSet<object>();

  /** Tensors tracked and not yet disposed. */
  get live(): number {
    return this.#live;
  }

  /** Tensors tracked since the ledger was made. */
  get tracked(): number {
    return this.#tracked;
  }

  /** Counts `tensor` until its first `dispose()`; tracking the same tensor again does nothing. */
  track<T extends Disposable>(tensor: T): T {
    if (this.#seen.has(tensor)) return tensor;
    this.#seen.add(tensor);
    this.#live += 1;
    this.#tracked += 1;
    const release = tensor.dispose;
    let disposed = false;
    tensor.dispose = () => {
      if (!disposed) {
        disposed = true;
        this.#live -= 1;
      }
      release.call(tensor);
    };
    return tensor;
  }

  /** Tracks every value of a name → tensor record (a cache, a model's outputs); returns it. */
  trackAll<R extends Readonly<Record<string, Disposable>>>(tensors: R): R {
    for (const t of Object.values(tensors)) this.track(t);
    return tensors;
  }
}
