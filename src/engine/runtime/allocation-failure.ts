/**
 * Whether an error is a failure to allocate memory: a JS ArrayBuffer the engine or transformers.js
 * could not get, onnxruntime's allocator failing inside wasm, or wasm memory that cannot grow.
 * Such a request may succeed once cached memory is freed (engine.ts retries it after dropping
 * the prefix cache); any other error is the request's own.
 */
export function isAllocationFailure(e: unknown): boolean {
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return ALLOCATION.test(message);
}

const ALLOCATION =
  /Array buffer allocation failed|Failed to allocate|bad_alloc|out of memory|Cannot enlarge memory|Maximum memory size exceeded|WebAssembly\.Memory\.grow|Aborted\(OOM\)/i;
