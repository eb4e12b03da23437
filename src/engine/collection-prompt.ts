/**
 * Prompts the JavaScript engine to collect garbage now, where a worker cannot ask for it.
 *
 * A buffer that has passed through a browser API (a stream's BYOB read, `crypto.subtle.digest`,
 * a `Response` body, `Response.arrayBuffer()`) is also held by the browser's wrapper of it, so
 * detaching it (release-buffer.ts) does not return its memory: that waits for a garbage
 * collection. A model file's buffer is such a buffer, as large as the model, and a worker that
 * then serves from wasm memory allocates too little JavaScript to start one: measured, a 135M
 * model's file stayed resident beside its session for as long as the bench watched.
 *
 * V8 starts a collection when the memory its array buffers claim grows past a limit. Buffers that
 * are allocated and never written claim address space only (their pages are never touched), so
 * allocating and dropping some, a turn of the event loop apart, prompts the collection at no
 * memory cost.
 */

/**
 * Tells when a collection has reached the garbage of a load. Made when that garbage is made (the
 * load's start), it holds an object of its own through the load, so that the object grows as old
 * as the garbage (young objects go at every minor collection, old ones only at a full one). Armed
 * when the garbage is ready to go, it lets the object go and is told, by a FinalizationRegistry,
 * when it has been collected. (Not a WeakRef: reading one keeps its object alive for the rest of
 * the job, through any collection the next allocation starts.)
 */
export class CollectionWitness {
  collected = false;
  private held: object | null = {};
  private readonly registry = new FinalizationRegistry<null>(() => {
    this.collected = true;
  });

  /** Lets the object go: `collected` becomes true once a collection has taken it. */
  arm(): void {
    if (this.held) this.registry.register(this.held, null);
    this.held = null;
  }
}

/**
 * Claims (and drops) untouched buffers of `step` bytes, a turn apart: at least `least` bytes (1 GiB:
 * several collections, so that one also finishes returning what an earlier one found, which a
 * worker otherwise does lazily), and on until `witness` has seen a collection reach the load's
 * garbage; then one more turn. At most `bytes` are claimed in all; an allocation that fails ends
 * it. Returns whether the witness saw the collection.
 */
export async function promptCollection(witness: CollectionWitness | null = null, bytes = 4 * 2 ** 30, step = 128 << 20, least = 2 ** 30): Promise<boolean> {
  witness?.arm();
  let claimed = 0;
  while (claimed < bytes && (claimed < least || (witness !== null && !witness.collected))) {
    try {
      claimed += new ArrayBuffer(step).byteLength;
    } catch {
      break; // no address space to spare: leave it to the engine's own schedule
    }
    await turn();
  }
  await turn();
  return witness?.collected ?? false;
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
