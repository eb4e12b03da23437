import type { LoadEvent } from '../protocol/engine-api.ts';

/**
 * The model load's progress as lines on stderr: each file when it starts, then at most once a
 * second and at every tenth of it, and when it is done. Files read from a folder or the cache
 * report too (fast); a download shows its bytes against the file's size.
 */
export function loadProgress(write: (line: string) => void = (l) => process.stderr.write(`${l}\n`), now: () => number = Date.now): (event: LoadEvent) => void {
  const files = new Map<string, { at: number; tenth: number; total: number }>();
  return (event) => {
    switch (event.type) {
      case 'file': {
        const seen = files.get(event.file);
        const tenth = event.total > 0 ? Math.floor((10 * event.loaded) / event.total) : 0;
        if (!seen) {
          files.set(event.file, { at: now(), tenth, total: event.total });
          write(`jev-local: ${event.file}: ${size(event.loaded)} of ${event.total > 0 ? size(event.total) : 'unknown size'}`);
          return;
        }
        seen.total = event.total;
        if (tenth > seen.tenth || now() - seen.at >= 1000) {
          seen.at = now();
          seen.tenth = tenth;
          const pct = event.total > 0 ? ` (${Math.floor((100 * event.loaded) / event.total)} %)` : '';
          write(`jev-local: ${event.file}: ${size(event.loaded)} of ${event.total > 0 ? size(event.total) : 'unknown size'}${pct}`);
        }
        return;
      }
      case 'file-done': {
        const seen = files.get(event.file);
        write(`jev-local: ${event.file}: done${seen && seen.total > 0 ? ` (${size(seen.total)})` : ''}`);
        return;
      }
      case 'fallback':
        write(`jev-local: ${event.from} failed, loading on ${event.to}: ${event.reason}`);
        return;
      case 'ready':
        return;
      default: {
        const never: never = event;
        void never;
      }
    }
  };
}

function size(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} kB`;
}
