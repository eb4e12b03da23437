import { expect } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import type { ErrorCode } from '../../src/contract/index.ts';
import { seededRandom } from '../../src/engine/runtime/seeded-random.ts';

/** Runs `f`, expects a JevError with exactly this code, status and param, and returns it. */
export function expectJevError(f: () => unknown, code: ErrorCode, status: number, param: string | null): JevError {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected a JevError to be thrown').toBeInstanceOf(JevError);
  const err = caught as JevError;
  expect({ code: err.code, status: err.status, param: err.param }).toEqual({ code, status, param });
  expect(err.message.length).toBeGreaterThan(0);
  if (param !== null) expect(err.message).toContain(param);
  return err;
}

/** The project's seeded generator (src/engine/runtime/seeded-random.ts). */
export const rng = seededRandom;
