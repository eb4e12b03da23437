import { signal, type Signal } from '@preact/signals';
import type { LoadEvent } from '../protocol/engine-api.ts';

export interface FileProgress {
  file: string;
  loaded: number;
  total: number;
  done: boolean;
}

/** Load events folded into per-file byte counts, observable by the UI. */
export interface LoadProgress {
  files: Signal<FileProgress[]>;
  notes: Signal<string[]>;
  push(event: LoadEvent): void;
}

export function createLoadProgress(): LoadProgress {
  const files = signal<FileProgress[]>([]);
  const notes = signal<string[]>([]);
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
    push(event) {
      switch (event.type) {
        case 'file':
          update(event.file, (f) => ({ ...f, loaded: event.loaded, total: event.total }));
          break;
        case 'file-done':
          update(event.file, (f) => ({ ...f, loaded: f.total || f.loaded, done: true }));
          break;
        case 'fallback':
          notes.value = [...notes.value, `WebGPU failed (${event.reason}); running on wasm instead.`];
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
