import type { LoadTimer } from '../load-timing.ts';

/** The SHA-256 of `body`, in hex; timed as the load's `integrity` where its `timer` is given. */
export async function digest(body: ArrayBuffer | Uint8Array<ArrayBuffer>, timer: LoadTimer | null = null): Promise<string> {
  const hashing = () => crypto.subtle.digest('SHA-256', body);
  const digest = new Uint8Array(await (timer ? timer.time('integrity', hashing) : hashing()));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}
