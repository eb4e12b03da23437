// The pass gate of the hold drill: `after` passes go through, the next waits until release; the
// held request's end (a cancel while waiting, or any end) opens the gate for whatever is queued.
import { describe, expect, it } from 'vitest';
import { PassGate } from '../../src/engine/runtime/pass-gate.ts';

const settled = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(() => (state = 'resolved'), () => (state = 'rejected'));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return state;
};

describe('the pass gate', () => {
  it('is open until held; lets `after` passes through, then holds the next until release', async () => {
    const gate = new PassGate();
    const a = new AbortController();
    expect(await settled(gate.pass(a.signal))).toBe('resolved');
    gate.hold(2);
    expect(await settled(gate.pass(a.signal))).toBe('resolved');
    expect(await settled(gate.pass(a.signal))).toBe('resolved');
    const third = gate.pass(a.signal);
    expect(await settled(third)).toBe('pending');
    gate.release();
    expect(await settled(third)).toBe('resolved');
    expect(gate.held).toBe(false);
  });

  it('a cancel of the held request rejects its pass with the reason and opens the gate', async () => {
    const gate = new PassGate();
    const a = new AbortController();
    gate.hold(0);
    const held = gate.pass(a.signal);
    a.abort(new DOMException('stop', 'AbortError'));
    await expect(held).rejects.toMatchObject({ name: 'AbortError' });
    expect(gate.held).toBe(false);
    expect(await settled(gate.pass(new AbortController().signal))).toBe('resolved');
  });

  it("the held request's end opens the gate (it stopped between passes); another request's end does not", async () => {
    const gate = new PassGate();
    const owner = new AbortController();
    const other = new AbortController();
    gate.hold(1);
    await gate.pass(owner.signal);
    gate.ended(other.signal);
    expect(gate.held).toBe(true);
    gate.ended(owner.signal);
    expect(gate.held).toBe(false);
  });

  it('refuses a count that is not a whole number ≥ 0', () => {
    expect(() => new PassGate().hold(-1)).toThrow(/after must be a whole number/);
    expect(() => new PassGate().hold(1.5)).toThrow(RangeError);
  });
});
