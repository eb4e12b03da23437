import { signal, type Signal } from '@preact/signals';
import type { JevClient } from '../../facade/jev-client.ts';
import type { DeviceChoice, DtypeChoice, EngineStatus } from '../../protocol/engine-api.ts';
import { errorInfo } from './error-info.ts';
import type { LoadProgress } from './load-progress.ts';

/** What the page asked the engine to load: the page's parameters, then the model panel's choice. */
export interface LoadTarget {
  model: string;
  host: string;
  device: DeviceChoice;
  dtype: DtypeChoice;
}

export type EnginePhase =
  | { phase: 'loading'; target: LoadTarget; startedAt: number }
  | { phase: 'ready'; target: LoadTarget; status: EngineStatus; loadMs: number }
  | { phase: 'failed'; target: LoadTarget; error: string; param: string | null; reason: string | null; details: Record<string, unknown> | null };

export interface EngineState {
  /** What the page's address asked for. */
  initial: LoadTarget;
  current: Signal<EnginePhase>;
  /**
   * Loads another model, device or dtype through `client.load`, from `host` where given (the
   * bundled model's), else from the host of the load before; progress starts afresh.
   */
  load(target: Omit<LoadTarget, 'host'> & { host?: string }): Promise<void>;
}

/**
 * Follows the client's first load (`client.ready`) and every later `client.load`; `onLoaded`
 * hears of each load the page chose (not the first, which the address already describes).
 */
export function createEngineState(client: JevClient, initial: LoadTarget, progress: LoadProgress, onLoaded?: (target: LoadTarget) => void): EngineState {
  const current = signal<EnginePhase>({ phase: 'loading', target: initial, startedAt: performance.now() });
  let generation = 0;

  const follow = (target: LoadTarget, startedAt: number, loading: Promise<EngineStatus>, chosen: boolean) => {
    const mine = ++generation;
    loading.then(
      (status) => {
        if (mine !== generation) return;
        current.value = { phase: 'ready', target, status, loadMs: performance.now() - startedAt };
        if (chosen) onLoaded?.(target);
      },
      (e: unknown) => {
        if (mine !== generation) return;
        const info = errorInfo(e);
        current.value = { phase: 'failed', target, error: info.message, param: info.param, reason: info.reason, details: info.details ?? null };
      },
    );
  };
  follow(initial, performance.now(), client.ready, false);

  return {
    initial,
    current,
    async load(choice) {
      const target = { ...choice, host: choice.host ?? current.value.target.host };
      const startedAt = performance.now();
      progress.reset();
      current.value = { phase: 'loading', target, startedAt };
      const loading = client.load({ model: target.model, host: target.host, device: target.device, dtype: target.dtype });
      follow(target, startedAt, loading, true);
      await loading.catch(() => undefined);
    },
  };
}
