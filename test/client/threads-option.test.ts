/**
 * `createClient({ threads })` (src/client/create-client.ts): a bad count is refused before any
 * worker starts, as a JevError `invalid_request` that names the option.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/create-client.ts';
import { JevError } from '../../src/contract/index.ts';

describe('createClient({ threads })', () => {
  it.each([0, -1, 1.5, 257, Number.NaN, '2' as unknown as number])('refuses %s, naming threads', (threads) => {
    let thrown: unknown;
    try {
      createClient({ threads });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(JevError);
    expect((thrown as JevError).code).toBe('invalid_request');
    expect((thrown as JevError).param).toBe('threads');
    expect((thrown as JevError).message).toContain("'threads' must be a whole number from 1 to 256");
  });
});
