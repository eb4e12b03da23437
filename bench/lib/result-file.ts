/** The bench's JSON result file: finalized and written at each checkpoint (schema: schema.ts). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadAverage } from '../../scripts/machine/procs.ts';
import type { BenchResult } from './schema.ts';
import { evaluateTargets } from './targets.ts';

/** The result as written at a checkpoint: its targets evaluated, the load average and duration so far. */
export function finalize(result: BenchResult, started: number): BenchResult {
  result.targets = evaluateTargets(result);
  result.load_average.end = loadAverage();
  result.duration_s = Math.round((performance.now() - started) / 1000);
  return result;
}

export function writeJson(file: string, result: BenchResult): void {
  mkdirSync(dirname(resolve(file)), { recursive: true });
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
}
