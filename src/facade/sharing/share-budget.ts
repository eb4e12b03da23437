import { JevError } from '../../contract/index.ts';
import type { LoadOptions } from '../../protocol/engine-api.ts';
import type { ShareLocks } from './share-protocol.ts';

/**
 * The origin's memory budget for shared engines (`createClient({ share: 'origin',
 * sharedMemoryBudget })`). Each hosting tab holds, beside its host lock, a Web Lock whose name
 * states its model's bytes; any tab reads them all with `navigator.locks.query()`. A crashed or
 * closed tab's locks go with it, so the sum is always that of the engines alive.
 */
const PREFIX = 'jev-engine-bytes:';

const bytesLockName = (key: string, bytes: number): string => `${PREFIX}${bytes}:${key}`;

/** Holds the lock stating `bytes` for the engine of `key`; the returned function releases it. */
export function holdModelBytes(locks: ShareLocks, key: string, bytes: number): () => void {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  void locks.request(bytesLockName(key, bytes), {}, () => held).catch(() => undefined);
  return release;
}

/** The model bytes the shared engines of the origin's other models hold now. */
export async function otherEnginesBytes(locks: ShareLocks, key: string): Promise<number> {
  const { held = [] } = await locks.query().catch(() => ({ held: [] }));
  let sum = 0;
  for (const { name } of held) {
    const m = name?.startsWith(PREFIX) ? /^(\d+):(.*)$/s.exec(name.slice(PREFIX.length)) : null;
    if (m && m[2] !== key) sum += Number(m[1]);
  }
  return sum;
}

/** The refusal of a load that would take the origin's shared engines past the budget. */
export function budgetRefusal(options: LoadOptions, bytes: number, others: number, budget: number): JevError {
  const mib = (x: number) => `${(x / 2 ** 20).toFixed(0)} MiB`;
  return new JevError(
    'model_load_failed',
    `${options.model} (${mib(bytes)}) does not fit the memory budget for this origin's shared engines (${mib(budget)}): the other models' engines hold ${mib(others)}. Close a tab that uses another model, or raise sharedMemoryBudget, then load again.`,
    {
      param: 'model',
      retriable: false,
      details: { reason: 'insufficient_memory', limit: 'shared_memory_budget', model: options.model, dtype: options.dtype, device: options.device, needed: bytes, available: Math.max(0, budget - others) },
    },
  );
}
