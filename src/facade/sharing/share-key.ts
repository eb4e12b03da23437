import type { LoadOptions } from '../../protocol/engine-api.ts';

/**
 * Tabs share an engine when they load the same model the same way: the same files (host and id),
 * device, dtype and every other load option. Anything else gets an engine of its own.
 */
export function shareKey(options: LoadOptions): string {
  const set = Object.entries(options).filter(([, value]) => value !== undefined && value !== null);
  return JSON.stringify(set.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The Web Lock the hosting tab holds for as long as it hosts the engine of `key`. */
export const hostLockName = (key: string): string => `jev-engine:${key}`;

/** The BroadcastChannel the tabs sharing the engine of `key` talk on. */
export const channelName = (key: string): string => `jev-share:${key}`;
