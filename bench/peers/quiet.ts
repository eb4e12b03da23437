/**
 * This machine's cores are shared with other processes (tests, other benchmarks). wasm threads
 * spin-wait between parallel sections, so a busy core slows a multi-threaded run far more than its
 * share: measurements wait for a quiet moment, and record the load they ran under.
 */
import { loadavg } from 'node:os';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The 1-minute load average, rounded to 0.01. */
export function load1(): number {
  return Math.round((loadavg()[0] ?? NaN) * 100) / 100;
}

/** Waits until the 1-minute load average is below `max` (no wait when undefined) or `maxWaitMs` passed; returns it. */
export async function waitForQuiet(max: number | undefined, maxWaitMs = 120_000): Promise<number> {
  const t0 = Date.now();
  let l = load1();
  while (max !== undefined && l >= max && Date.now() - t0 < maxWaitMs) {
    await sleep(5000);
    l = load1();
  }
  return l;
}
