/** Small helpers the bench's row writers share. */

/** One worker call, timed by the caller's sampler: its result and the browser's CPU seconds meanwhile. */
export type Timed = <T>(name: string, ...args: unknown[]) => Promise<{ r: T; cpu: number }>;

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A duration for the log: milliseconds below a second, seconds above. */
export function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`;
}

/** Bytes in MiB for tables and logs; '—' where unmeasured. */
export const mib = (x: number | null) => (x === null || x === undefined ? '—' : `${(x / 2 ** 20).toFixed(0)} MiB`);

/** The bench's log line: `[bench hh:mm:ss] …`. */
export const log = (...a: unknown[]) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);
