import { computed, signal, type ReadonlySignal, type Signal } from '@preact/signals';
import type { LoadEvent } from '../../protocol/engine-api.ts';

export interface FileProgress {
  file: string;
  loaded: number;
  /** Bytes expected (0 until the size is known). */
  total: number;
  done: boolean;
}

export interface ProgressTotals {
  loaded: number;
  total: number;
  files: number;
  done: number;
}

/** Load events folded into per-file byte counts and a total, observable by the UI. */
export interface LoadProgress {
  files: Signal<FileProgress[]>;
  notes: Signal<string[]>;
  totals: ReadonlySignal<ProgressTotals>;
  push(event: LoadEvent): void;
  /** Forgets the previous load's files, before another load starts. */
  reset(): void;
}

export function createLoadProgress(): LoadProgress {
  const files = signal<FileProgress[]>([]);
  const notes = signal<string[]>([]);
  const totals = computed<ProgressTotals>(() => {
    const list = files.value;
    return {
      loaded: list.reduce((n, f) => n + (f.done ? Math.max(f.loaded, f.total) : f.loaded), 0),
      total: list.reduce((n, f) => n + Math.max(f.total, f.loaded), 0),
      files: list.length,
      done: list.filter((f) => f.done).length,
    };
  });
  const update = (file: string, change: (f: FileProgress) => FileProgress) => {
    const list = files.value;
    const at = list.findIndex((f) => f.file === file);
    const current = at >= 0 ? list[at]! : { file, loaded: 0, total: 0, done: false };
    const next = [...list];
    next[at >= 0 ? at : list.length] = change(current);
    files.value = next;
  };
  return {
    files,
    notes,
    totals,
    reset() {
      files.value = [];
      notes.value = [];
    },
    push(event) {
      switch (event.type) {
        case 'file':
          update(event.file, (f) => ({ ...f, loaded: event.loaded, total: event.total }));
          break;
        case 'file-done':
          update(event.file, (f) => ({ ...f, loaded: f.total || f.loaded, total: f.total || f.loaded, done: true }));
          break;
        case 'fallback':
          notes.value = [...notes.value, `WebGPU failed (${event.reason}), so the engine falls back to wasm.`];
          break;
        case 'ready':
          break;
        default: {
          const never: never = event;
          void never;
        }
      }
    },
  };
}
