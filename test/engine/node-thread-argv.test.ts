import { describe, expect, it } from 'vitest';
import { threadExecArgv } from '../../src/engine/runtime/node-thread-argv.ts';

describe('the Node options a thread started from a file is given', () => {
  it('are the process\'s own less --input-type, in either of its forms', () => {
    expect(threadExecArgv(['--input-type=module', '-e', 'x'])).toEqual(['-e', 'x']);
    expect(threadExecArgv(['--input-type', 'commonjs', '--import', 'tsx'])).toEqual(['--import', 'tsx']);
    expect(threadExecArgv(['--max-old-space-size=4096', '--enable-source-maps'])).toEqual(['--max-old-space-size=4096', '--enable-source-maps']);
    expect(threadExecArgv([])).toEqual([]);
  });
});
