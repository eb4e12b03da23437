import type { LoadOptions } from '../../protocol/engine-api.ts';

/**
 * Tabs share an engine when they load the same model the same way: same files (host and id),
 * device and dtype. Anything else gets an engine of its own.
 */
export function shareKey(options: LoadOptions): string {
  return JSON.stringify([options.host, options.model, options.device, options.dtype, options.ortBase ?? null]);
}

/** The Web Lock the hosting tab holds for as long as it hosts the engine of `key`. */
export const hostLockName = (key: string): string => `jev-engine:${key}`;

/** The BroadcastChannel the tabs sharing the engine of `key` talk on. */
export const channelName = (key: string): string => `jev-share:${key}`;
