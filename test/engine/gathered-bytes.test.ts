/**
 * GatheredBytes (load/storage/gathered-bytes.ts): a kept part given as pieces of other buffers.
 * Its bytes, ranges and sample against the same part built byte by byte here, and the checks on
 * its pieces.
 */
import { describe, expect, it } from 'vitest';
import { sampleBytes } from '../../src/engine/load/storage/checked-records.ts';
import { GatheredBytes } from '../../src/engine/load/storage/gathered-bytes.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** Pieces of random lengths with random gaps, from one source; and the part they make, written byte by byte. */
function random(seed: number, count: number, maxPiece: number) {
  const random = seededRandom(seed);
  const source = Uint8Array.from({ length: count * maxPiece }, () => Math.floor(random() * 256));
  const pieces: { at: number; bytes: Uint8Array }[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    at += Math.floor(random() * 64);
    const from = Math.floor(random() * (source.length - maxPiece));
    const bytes = source.subarray(from, from + 1 + Math.floor(random() * maxPiece));
    pieces.push({ at, bytes });
    at += bytes.length;
  }
  const size = at + Math.floor(random() * 100);
  const expected = new Uint8Array(size);
  for (const p of pieces) for (let i = 0; i < p.bytes.length; i++) expected[p.at + i] = p.bytes[i]!;
  return { gathered: new GatheredBytes(size, pieces), expected };
}

describe('GatheredBytes', () => {
  it('is the part its pieces make, zeros between them: whole, any range, and the sample a store checks', () => {
    for (const [seed, count, maxPiece] of [[1, 5, 100], [2, 40, 70_000], [3, 1, 10]] as const) {
      const { gathered, expected } = random(seed, count, maxPiece);
      expect(Buffer.from(gathered.whole()).equals(Buffer.from(expected))).toBe(true);
      const r = seededRandom(seed + 100);
      for (let i = 0; i < 50; i++) {
        const a = Math.floor(r() * expected.length);
        const b = a + Math.floor(r() * (expected.length - a));
        expect(Buffer.from(gathered.slice(a, b)).equals(Buffer.from(expected.subarray(a, b)))).toBe(true);
      }
      // Larger than the sample (1 MiB) in the second case: blocks spread over the part.
      expect(Buffer.from(gathered.sample()).equals(Buffer.from(sampleBytes(expected)))).toBe(true);
    }
  });

  it('refuses pieces that overlap or end past its size', () => {
    const bytes = new Uint8Array(10);
    expect(() => new GatheredBytes(30, [{ at: 0, bytes }, { at: 5, bytes }])).toThrow(RangeError);
    expect(() => new GatheredBytes(15, [{ at: 10, bytes }])).toThrow(/ends past 15/);
    expect(new GatheredBytes(20, [{ at: 0, bytes }, { at: 10, bytes }]).byteLength).toBe(20);
  });
});
