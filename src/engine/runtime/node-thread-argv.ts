/**
 * The Node options a `worker_threads` Worker started from a file is given: the process's own
 * (`process.execArgv`, what a Worker inherits by default) less `--input-type`, which Node accepts
 * only for a script given as `--eval` and refuses in a thread started from a file. Without this, the
 * built server started from `node --input-type=module -e "…"` lost its engine thread at every start
 * (src/server/engine-thread.ts); the grammar thread that thread starts inherits its options, so
 * without the flag too (test/server/packed-bin.test.ts).
 */
export function threadExecArgv(execArgv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    if (a === '--input-type') i++; // its value follows
    else if (!a.startsWith('--input-type=')) out.push(a);
  }
  return out;
}
