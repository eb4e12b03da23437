/**
 * The CLI's progress on stderr: a bar redrawn in place on a terminal, plain lines (one per tenth
 * of the run, and at the end) when stderr is a file or a pipe.
 */
import type { EvaluationProgress } from '../../src/evaluation/index.ts';

export interface ProgressBar {
  update(progress: EvaluationProgress): void;
  /** Ends the bar's line (a terminal) so that later output starts on its own line. */
  done(): void;
}

const WIDTH = 30;

export function progressBar(stream: NodeJS.WriteStream = process.stderr, now: () => number = Date.now): ProgressBar {
  const start = now();
  let lastTenth = -1;
  let drawn = false;
  const line = ({ done, total, mode, modes }: EvaluationProgress): string => {
    const share = total === 0 ? 1 : done / total;
    const elapsed = (now() - start) / 1000;
    const eta = done === 0 ? '' : ` eta ${formatSeconds((elapsed / done) * (total - done))}`;
    return `${done}/${total} requests (${(share * 100).toFixed(0)}%), mode ${mode + 1}/${modes}, ${formatSeconds(elapsed)}${eta}`;
  };
  return {
    update(progress) {
      if (stream.isTTY) {
        const filled = Math.round((progress.total === 0 ? 1 : progress.done / progress.total) * WIDTH);
        stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${line(progress)}\u001b[K`);
        drawn = true;
        return;
      }
      const tenth = progress.total === 0 ? 10 : Math.floor((progress.done / progress.total) * 10);
      if (tenth === lastTenth) return;
      lastTenth = tenth;
      stream.write(`eval: ${line(progress)}\n`);
    },
    done() {
      if (drawn) stream.write('\n');
      drawn = false;
    },
  };
}

function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(0)} s`;
  return `${Math.floor(s / 60)} min ${String(Math.round(s % 60)).padStart(2, '0')} s`;
}
