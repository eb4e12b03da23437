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
 * allocating some, a turn of the event loop apart, prompts collections at no memory cost. A claim
 * dropped at once dies in a young-generation collection, which takes young garbage but never
 * reaches a file's buffer (old by then); so while a watched object remains, every other claim is
 * held for a few turns: claims that live long enough to be promoted make the old generation's
 * array-buffer bytes grow, and that starts a full collection. Measured in Chromium 156, the 135M
 * fp32 model's load in fresh pages (`npx tsx bench/peers/load-memory.ts`): with every claim
 * dropped at once the file's buffer was collected after 4 loads of 12, and the renderer otherwise
 * kept ~520 MiB more until something else started a full collection; with held claims, after
 * 12 of 12 (twice: held from the first claim, and, as now, past the least).
 */

/**
 * Tells when the objects it watches have been collected (a FinalizationRegistry's word, not a
 * WeakRef's: reading a WeakRef keeps its object alive for the rest of the job, through any
 * collection the next allocation starts). Watching a released buffer's own object is what tells
 * that the browser's wrapper of it, and with it the memory, can go: the two go together.
 */
export class CollectionWitness {
  private pending = 0;
  private readonly registry = new FinalizationRegistry<null>(() => {
    this.pending--;
  });

  /** Watches `object`, which its owner is letting go of. */
  watch(object: object): void {
    this.pending++;
    this.registry.register(object, null);
  }

  /** Whether every object watched has been collected. */
  get collected(): boolean {
    return this.pending === 0;
  }
}

/**
 * Claims untouched buffers of `step` bytes, a turn apart: at least `least` bytes, each dropped at
 * once (1 GiB: several collections, so that one also finishes returning what an earlier one
 * found, which a worker otherwise does lazily); then on, until every object `witness` watches has
 * been collected, with every other claim held until `held` bytes of newer held claims exist. Then
 * the claims are dropped and one more turn passes. At most `bytes` are claimed in all; an
 * allocation that fails ends it. Returns whether the witness saw everything it watches go.
 */
export async function promptCollection(
  witness: CollectionWitness | null = null,
  bytes = 4 * 2 ** 30,
  step = 128 << 20,
  least = 2 ** 30,
  held = 512 << 20,
): Promise<boolean> {
  let claimed = 0;
  const claims: ArrayBuffer[] = [];
  while (claimed < bytes && (claimed < least || (witness !== null && !witness.collected))) {
    try {
      // The least is claimed and dropped at once: young-generation collections take what is
      // young. Past it, every other claim is held, until a full collection has taken what is old.
      if (claimed < least || ((claimed - least) / step) % 2 === 0) claimed += new ArrayBuffer(step).byteLength;
      else {
        claims.push(new ArrayBuffer(step));
        claimed += step;
        if (claims.length * step > held) claims.shift();
      }
    } catch {
      break; // no address space to spare: leave it to the engine's own schedule
    }
    await turn();
  }
  claims.length = 0;
  await turn();
  return witness?.collected ?? false;
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));
