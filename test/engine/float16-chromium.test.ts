/**
 * The engine's binary16 reader and writer (src/engine/runtime/float16.ts) against the browser's own:
 * Chromium's native `Float16Array` (the array type onnxruntime-web hands float16 tensors over in
 * there) decodes all 65,536 bit patterns, and rounds 20,000 numbers across the whole range
 * (subnormals, overflow, ties), exactly as float16.ts does in Node. Skipped where no Chromium is
 * installed.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchTestChromium } from '../../bench/peers/browser.ts';
import { decodeFloat16Bits, numberToFloat16 } from '../../src/engine/runtime/float16.ts';


let browser: Browser;

/** A value as a string that tells NaN and -0 apart. */
const show = (v: number) => (Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '-0' : String(v));

/** Numbers over the whole binary16 range and beyond, with exact ties between neighbours among them. */
function probes(): number[] {
  const out: number[] = [];
  for (let i = 0; i < 20000; i++) {
    const m = ((Math.sin(i * 12.9898) * 43758.5453) % 1) * 2048;
    out.push(m * 2 ** ((i % 48) - 36));
  }
  // Exact midpoints between neighbours 1 + k/1024 and 1 + (k+1)/1024 (ties to even), and around 65504.
  for (let k = 0; k < 64; k++) out.push(1 + (k + 0.5) / 1024, -(1 + (k + 0.5) / 1024));
  out.push(65504, 65519, 65520, 2 ** -25, 2 ** -24 * 1.5, -0, Infinity, -Infinity);
  return out;
}

describe.skipIf(!hasChromium())('float16 in Chromium', () => {
  beforeAll(async () => {
    browser = await launchTestChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("agrees with Chromium's native Float16Array on every bit pattern and on rounding", async () => {
    const page = await browser.newPage();
    const numbers = probes();
    const r = await page.evaluate((xs) => {
      const F16 = (globalThis as unknown as { Float16Array?: new (x: ArrayBufferLike | number[]) => ArrayLike<number> & { buffer: ArrayBuffer } }).Float16Array;
      if (!F16) return null;
      const bits = Uint16Array.from({ length: 65536 }, (_, i) => i);
      const values = Array.from(new F16(bits.buffer), (v) => (Number.isNaN(v) ? 'NaN' : Object.is(v, -0) ? '-0' : String(v)));
      const rounded = xs.map((x) => new Uint16Array(new F16([x]).buffer)[0]!);
      return { values, rounded };
    }, numbers);
    await page.close();
    expect(r, 'this Chromium has Float16Array (onnxruntime-web then returns float16 data in it)').not.toBeNull();
    const mine = decodeFloat16Bits(Uint16Array.from({ length: 65536 }, (_, i) => i));
    const decodeMismatches = r!.values.filter((v, i) => v !== show(mine[i]!)).length;
    const roundMismatches = numbers.filter((x, i) => numberToFloat16(x) !== r!.rounded[i]).length;
    expect(decodeMismatches).toBe(0);
    expect(roundMismatches).toBe(0);
  });
});
