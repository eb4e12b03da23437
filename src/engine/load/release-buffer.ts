/**
 * Returns a buffer's memory now rather than at the next full garbage collection: detaching it
 * (`ArrayBuffer.prototype.transfer`, or a structured-clone transfer where that is missing) frees
 * its backing store at once. A model file's bytes are as large as the model, and a worker that
 * allocates little JavaScript while it serves (its tensors live in wasm memory) may not collect
 * for a long time: measured, 520 MiB of garbage stayed in a 135M model's renderer for as long as
 * it was watched (20 s), until a forced collection. Every view of the buffer becomes empty, so
 * only its owner, once done with it, calls this. Returns the bytes released.
 */
export function releaseBuffer(buffer: ArrayBufferLike): number {
  if (!(buffer instanceof ArrayBuffer) || buffer.byteLength === 0) return 0;
  const bytes = buffer.byteLength;
  const transferable = buffer as ArrayBuffer & { transfer?: (length?: number) => ArrayBuffer };
  if (typeof transferable.transfer === 'function') transferable.transfer(0);
  else structuredClone(buffer, { transfer: [buffer] });
  return bytes;
}

/** `releaseBuffer` of a view's buffer, where the view covers all of it (otherwise others may use the rest). */
export function releaseView(view: Uint8Array): number {
  return view.byteOffset === 0 && view.byteLength === view.buffer.byteLength ? releaseBuffer(view.buffer) : 0;
}
