import { expect } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import type { ErrorCode } from '../../src/contract/index.ts';

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

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
