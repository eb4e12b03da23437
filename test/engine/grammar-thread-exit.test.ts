/**
 * Grammar workers in Node (src/engine/grammar/grammar-thread.ts) do not keep a process alive: a
 * script that used structured output ends by itself once its own work is done. A Node Worker's
 * port is referenced again when a `message` listener is added, so the worker is unreferenced
 * after its listeners are attached (before 2026-12-02, a process with three grammar workers never
 * ended: `npm run bench -- --only structured` hung after writing its results).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GENERATED } from '../support/models.ts';

const REPO = join(import.meta.dirname, '../..');
const present = existsSync(join(GENERATED, 'tiny-random-llama', 'onnx', 'model.onnx'));

describe.skipIf(!present)('grammar workers and the end of a Node process', () => {
  it('a process that compiled on three grammar workers ends by itself when its work is done', () => {
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const run = spawnSync(process.execPath, [tsx, join(REPO, 'test/fixtures/processes/grammar-workers-exit.ts')], { cwd: REPO, encoding: 'utf8', timeout: 90_000 });
    expect(run.stdout).toContain('workers 3');
    // Killed at the timeout, it has no exit status (and the signal says so).
    expect({ status: run.status, signal: run.signal }).toEqual({ status: 0, signal: null });
  }, 120_000);
});
