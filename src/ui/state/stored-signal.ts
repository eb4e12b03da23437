import { effect, signal, type Signal } from '@preact/signals';

/** Where the playground keeps what a person typed; versioned so an old shape is never misread. */
export const STORAGE_PREFIX = 'jev.playground.v1.';

function read(key: string): unknown {
  try {
    const raw = localStorage.getItem(STORAGE_PREFIX + key);
    return raw === null ? undefined : (JSON.parse(raw) as unknown);
  } catch {
    return undefined; // storage disabled, or not JSON: start afresh
  }
}

/**
 * A signal kept in localStorage: read once, written on every change. `accept` checks what was
 * stored (it may be from an older page, or edited by hand); anything it refuses gives `fallback`.
 */
export function storedSignal<T>(key: string, fallback: T, accept: (raw: unknown) => raw is T): Signal<T> {
  const stored = read(key);
  const s = signal<T>(stored !== undefined && accept(stored) ? stored : fallback);
  effect(() => {
    const value = s.value;
    try {
      localStorage.setItem(STORAGE_PREFIX + key, JSON.stringify(value));
    } catch {
      // Quota or privacy mode: the page keeps working, only without persistence.
    }
  });
  return s;
}

export const isString = (x: unknown): x is string => typeof x === 'string';
export const isBoolean = (x: unknown): x is boolean => typeof x === 'boolean';
export const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
