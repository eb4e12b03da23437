import type { LastLoad, LoadPhase } from '../../protocol/engine-api.ts';
import { formatBytes } from '../shared/format.ts';

/** The phases of `status().lastLoad`, in the order a load meets them, with the words the panel uses. */
const PHASE_TEXT: [LoadPhase, string][] = [
  ['download', 'download'],
  ['storageRead', 'reading the stored files'],
  ['integrity', 'checking their SHA-256'],
  ['tokenizer', 'tokenizer'],
  ['wasm', 'compiling onnxruntime'],
  ['rewrites', 'graph rewrites'],
  ['session', 'creating the session'],
  ['firstPass', 'first pass'],
  ['other', 'the rest'],
];

const seconds = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

/** How long the last load took and where it went (`status().lastLoad`): its phases, largest first among those that took time. */
export function LoadFacts({ lastLoad }: { lastLoad: LastLoad | undefined }) {
  if (!lastLoad) return null;
  const shown = PHASE_TEXT.filter(([phase]) => lastLoad.phases[phase] >= 0.5);
  const from = lastLoad.fromCache ? 'every file from this browser’s storage' : lastLoad.bytesFetched > 0 ? `${formatBytes(lastLoad.bytesFetched)} downloaded` : 'no file from this browser’s storage';
  const source = lastLoad.keptReadAsAsked > 0 ? `${from}; ${formatBytes(lastLoad.keptReadAsAsked)} of kept weights read as the session asked` : from;
  return (
    <div class="facts-box" data-testid="load-facts" data-total-ms={String(lastLoad.totalMs)} data-from-cache={String(lastLoad.fromCache)}>
      <p class="small-text">
        Loaded in {seconds(lastLoad.totalMs)} ({source}).
      </p>
      <ul class="muted small-text load-phases">
        {shown.map(([phase, text]) => (
          <li key={phase} data-phase={phase} data-ms={String(lastLoad.phases[phase])}>
            {text}: {seconds(lastLoad.phases[phase])} ({Math.round((100 * lastLoad.phases[phase]) / Math.max(lastLoad.totalMs, 1))}%)
          </li>
        ))}
      </ul>
    </div>
  );
}
