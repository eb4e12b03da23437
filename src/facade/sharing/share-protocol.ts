import type { ChatCompletionChunk } from '../../contract/index.ts';
import type { ErrorWire } from '../../protocol/error-wire.ts';
import type { DebugAction } from '../../protocol/engine-api.ts';

/**
 * The wire between the tabs of one origin that share an engine, on a BroadcastChannel named
 * after the model (share-key.ts). Every message names its sender (`from`, a tab id); a message
 * for one tab names it (`to`), and the others ignore it.
 *
 * - `hello` (a tab joins): the host answers with `host`.
 * - `host` (a tab became the host, or answers a `hello`): requests go to it from now on.
 * - `call` / `cancel` (a tab → the host): one engine call, or the cancel of one (by call id).
 * - `chunk` / `result` / `failure` (the host → the calling tab): a streamed chat's chunk, the
 *   call's value, or its error as a structured value.
 */
export type RelayedCall =
  | { method: 'load' }
  | { method: 'status' }
  | { method: 'models' }
  | { method: 'decide'; body: unknown }
  | { method: 'extract'; body: unknown }
  | { method: 'chat'; body: unknown; stream: boolean }
  | { method: 'clearCache' }
  | { method: 'debug'; action: DebugAction };

export type ShareMessage =
  | { type: 'jev-share-hello'; from: string }
  | { type: 'jev-share-host'; from: string }
  | { type: 'jev-share-call'; from: string; to: string; id: string; call: RelayedCall }
  | { type: 'jev-share-cancel'; from: string; to: string; id: string }
  | { type: 'jev-share-chunk'; from: string; to: string; id: string; chunk: ChatCompletionChunk }
  | { type: 'jev-share-result'; from: string; to: string; id: string; value: unknown }
  | { type: 'jev-share-failure'; from: string; to: string; id: string; error: ErrorWire };

const TYPES: ReadonlySet<unknown> = new Set([
  'jev-share-hello',
  'jev-share-host',
  'jev-share-call',
  'jev-share-cancel',
  'jev-share-chunk',
  'jev-share-result',
  'jev-share-failure',
]);

export function isShareMessage(x: unknown): x is ShareMessage {
  if (typeof x !== 'object' || x === null) return false;
  const m = x as { type?: unknown; from?: unknown };
  return TYPES.has(m.type) && typeof m.from === 'string';
}

/** What a tab needs of a BroadcastChannel (a fake one in tests). */
export interface ShareChannel {
  postMessage(message: ShareMessage): void;
  onmessage: ((event: MessageEvent) => void) | null;
  close(): void;
}

/** What a tab needs of `navigator.locks` (a fake one in tests). */
export interface ShareLocks {
  request(name: string, options: { signal?: AbortSignal }, callback: (lock: unknown) => Promise<unknown>): Promise<unknown>;
  query(): Promise<{ held?: { name?: string }[]; pending?: { name?: string }[] }>;
}
