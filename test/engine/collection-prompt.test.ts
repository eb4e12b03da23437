/**
 * The collection prompt (src/engine/load/collection-prompt.ts): allocating buffers that are never
 * written makes V8 collect garbage, which nothing else in an idle worker does. An object reachable
 * only through a WeakRef is the witness: it is gone after the prompt, and (the control, so that
 * the test can fail) still there after as many turns of the event loop without it.
 */
import { describe, expect, it } from 'vitest';
import { CollectionWitness, promptCollection } from '../../src/engine/load/collection-prompt.ts';

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** Whether an object nobody holds (watched by a witness `wait` is given) is still there after `wait`, in each of `tries` tries. */
async function survives(wait: (witness: CollectionWitness) => Promise<unknown>, tries = 5): Promise<boolean[]> {
  const kept: boolean[] = [];
  for (let i = 0; i < tries; i++) {
    const witness = new CollectionWitness();
    const ref = ((): WeakRef<object> => {
      const rows = { rows: new Array(1000).fill(i) };
      witness.watch(rows);
      return new WeakRef(rows);
    })();
    await turn(); // a WeakRef's target is kept until the end of the job that made it
    await wait(witness);
    kept.push(ref.deref() !== undefined);
  }
  return kept;
}

/** How many `ArrayBuffer`s `run` constructs (the prompt's claims). */
async function counted(run: () => Promise<unknown>): Promise<number> {
  const real = globalThis.ArrayBuffer;
  let n = 0;
  globalThis.ArrayBuffer = new Proxy(real, {
    construct(target, args) {
      n++;
      return Reflect.construct(target, args);
    },
  });
  try {
    await run();
  } finally {
    globalThis.ArrayBuffer = real;
  }
  return n;
}

describe('promptCollection', () => {
  it('collects what nobody holds, as its witness sees; without it, the same turns of the event loop do not', async () => {
    // The engine always prompts with a witness of what it let go (session-rewrites.ts): the prompt
    // goes on until the witness has seen it collected, or its budget is spent.
    const seen: boolean[] = [];
    expect(await survives(async (witness) => seen.push(await promptCollection(witness)))).toEqual([false, false, false, false, false]);
    expect(seen).toEqual([true, true, true, true, true]);
    const control = await survives(async () => {
      for (let k = 0; k < 8; k++) await turn();
    });
    expect(control.some((kept) => kept)).toBe(true);
  });

  it('with a witness, goes on until what it watches (held through earlier collections, then let go) has been collected, and says so', async () => {
    const witness = new CollectionWitness();
    let held: object | null = { rows: new Array(1000).fill(1) };
    witness.watch(held);
    // Held through collections, as a load's buffer is: it grows old (only a full collection takes it then).
    await promptCollection();
    await promptCollection();
    expect(witness.collected).toBe(false);
    held = null;
    let gone = false;
    const claimed = await counted(async () => (gone = await promptCollection(witness, 64 * 2 ** 30, 128 << 20, 0)));
    expect(held).toBeNull();
    expect(gone).toBe(true);
    expect(witness.collected).toBe(true);
    // Far fewer than the 512 steps the budget allows.
    expect(claimed).toBeGreaterThan(0);
    expect(claimed).toBeLessThan(64);
  });

  it('claims at least `least` bytes, a witness or not (a collection also finishes returning what the one before found)', async () => {
    expect(await counted(() => promptCollection(null, 4 * 2 ** 30, 128 << 20))).toBe(8);
    // Nothing watched, or all of it gone at once: still the least.
    expect(await counted(() => promptCollection(new CollectionWitness(), 4 * 2 ** 30, 128 << 20))).toBe(8);
  });

  it('stops, without throwing, at an allocation that fails (a page short of address space)', async () => {
    const real = globalThis.ArrayBuffer;
    let made = 0;
    // The third allocation fails.
    globalThis.ArrayBuffer = new Proxy(real, {
      construct(target, args) {
        if (++made === 3) throw new RangeError('Array buffer allocation failed');
        return Reflect.construct(target, args);
      },
    });
    try {
      await promptCollection(null, 2 ** 30, 64 << 20);
    } finally {
      globalThis.ArrayBuffer = real;
    }
    expect(made).toBe(3);
  });
});
