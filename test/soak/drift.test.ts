// The soak's verdict (scripts/soak/drift.ts) on samples made by hand: a flat run passes, a level
// that keeps rising fails, one high reading in a window does not, stray tensors always fail; the worker's
// whole heap (compiled code included) is reported, its objects bounded.
import { describe, expect, it } from 'vitest';
import { judge, type Sample } from '../../scripts/soak/drift.ts';

const MiB = 2 ** 20;

function run(n: number, at: (i: number) => Partial<Sample> = () => ({})): Sample[] {
  return Array.from({ length: n }, (_, k) => {
    const i = (k + 1) * 25;
    return { i, t: k, rendererRss: 300 * MiB, rendererAnon: 200 * MiB, pageHeap: 9 * MiB, treeRss: 1000 * MiB, workerHeap: 7 * MiB, workerBuffers: MiB, workerObjects: i % 500 === 100 ? 5 * MiB : null, wasmHeap: 16 * MiB, cacheBytes: 0, cacheEntries: 0, strayTensors: 0, liveAfterClear: 0, ...at(i) };
  });
}

describe('soak verdict', () => {
  it('passes a flat run, levelled at request 100 and checked over the rest', () => {
    const v = judge(run(48));
    expect(v).toMatchObject({ ok: true, levelAt: 100, checkedRequests: 1100, problems: [] });
    expect(v.drift.map((d) => [d.figure, d.bounded, d.max])).toEqual([
      ['rendererRss', true, 0],
      ['rendererAnon', true, 0],
      ['pageHeap', false, 0],
      ['workerHeap', false, 0],
      ['workerObjects', true, 0],
      ['wasmHeap', true, 0],
    ]);
  });

  it('fails objects that keep rising (1 % a hundred requests), naming the figure and the window', () => {
    const v = judge(run(48, (i) => ({ workerObjects: i % 500 === 100 ? 5 * MiB * (1 + Math.max(0, i - 100) / 10_000) : null })));
    expect(v.ok).toBe(false);
    expect(v.problems.every((p) => p.startsWith('workerObjects over requests'))).toBe(true);
    expect(v.problems.at(-1)).toMatch(/^workerObjects over requests 1100–1175: median \d+ bytes, \+10\.0 % over its level at request 100/);
    expect(v.drift.find((d) => d.figure === 'workerObjects')!.max).toBeCloseTo(0.1);
  });

  it('reports the whole worker heap (compiled code included) without bounding it, unless asked', () => {
    const rising = run(48, (i) => ({ workerHeap: 7 * MiB * (1 + Math.max(0, i - 100) / 10_000) }));
    expect(judge(rising).ok).toBe(true);
    expect(judge(rising).drift.find((d) => d.figure === 'workerHeap')).toMatchObject({ bounded: false });
    expect(judge(rising, { bounded: ['workerHeap'] }).ok).toBe(false);
  });

  it('does not fail on one high reading in a window (the median is compared)', () => {
    const v = judge(run(48, (i) => (i === 700 ? { rendererRss: 400 * MiB } : {})));
    expect(v.ok).toBe(true);
  });

  it('fails on a tensor beyond the prefix cache, or one left with the cache emptied', () => {
    expect(judge(run(48, (i) => (i === 500 ? { strayTensors: 4 } : {}))).problems).toEqual(["after request 500: 4 live tensors beyond the prefix cache's"]);
    expect(judge(run(48, (i) => (i === 525 ? { liveAfterClear: 1 } : {}))).problems).toEqual(['after request 525: 1 live tensors with the prefix cache emptied']);
  });

  it('skips the wasm heap where there is none (WebGPU, no isolation), and fails a run that ended in its warm-up', () => {
    expect(judge(run(48, () => ({ wasmHeap: null }))).drift.map((d) => d.figure)).toEqual(['rendererRss', 'rendererAnon', 'pageHeap', 'workerHeap', 'workerObjects']);
    expect(judge(run(5))).toMatchObject({ ok: false, levelAt: null });
  });
});
