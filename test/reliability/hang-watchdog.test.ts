// The hang watchdog's rule, on a hand-driven clock: a worker that answers pings is never hung; one
// that leaves a ping unanswered is hung after hangAfterMs between passes, after a time in
// proportion to the pass's tokens inside one (learnt from ended passes), after loadAfterMs in a
// load; late ticks (a throttled page) never make a false hang.
import { describe, expect, it } from 'vitest';
import { HangWatchdog } from '../../src/facade/hang-watchdog.ts';

function clocked(options: ConstructorParameters<typeof HangWatchdog>[0] = {}) {
  let t = 0;
  const dog = new HangWatchdog({ hangAfterMs: 1000, loadAfterMs: 60_000, msPerTokenBeforeMeasured: 10, passMargin: 4, ...options, now: () => t });
  return { dog, at: (ms: number) => (t = ms), tick: () => dog.tick().verdict };
}

describe('the hang watchdog', () => {
  it('a worker that answers every ping is never hung, however long it runs', () => {
    const { dog, at, tick } = clocked();
    for (let ms = 0; ms < 100_000; ms += 250) {
      at(ms);
      const v = tick();
      expect(v).not.toBe('hung');
      if (v === 'ping') dog.pong();
    }
  });

  it('between passes: hung once a ping is unanswered for more than hangAfterMs, not before', () => {
    const { dog, at, tick } = clocked();
    at(0);
    expect(tick()).toBe('ping');
    at(1000);
    expect(tick()).toBe('ok'); // exactly the allowance: not past it
    at(1001);
    const check = dog.tick();
    expect(check).toMatchObject({ verdict: 'hung' });
    expect((check as { message: string }).message).toMatch(/stopped answering for 1\.0 s between forward passes \(allowed: 1\.0 s\)/);
  });

  it('a long prefill is not a hang: a pass of n tokens may take hangAfterMs + n × ms/token × margin', () => {
    const { dog, at, tick } = clocked();
    at(0);
    expect(tick()).toBe('ping');
    at(10);
    dog.beat({ type: 'pass-start', tokens: 2000 });
    // Before any pass ended: 1000 + 2000 × 10 × 4 = 81,000 ms from the pass's start.
    expect(dog.allowedMs()).toBe(81_000);
    at(81_010);
    expect(tick()).toBe('ok');
    at(81_011);
    expect(tick()).toBe('hung');
  });

  it('learns the slowest ms per token from the passes that ended', () => {
    const { dog, at, tick } = clocked();
    at(0);
    tick();
    dog.beat({ type: 'pass-start', tokens: 100 });
    at(500);
    dog.beat({ type: 'pass-end', tokens: 100, ms: 500 }); // 5 ms/token
    dog.beat({ type: 'pass-start', tokens: 1 });
    at(530);
    dog.beat({ type: 'pass-end', tokens: 1, ms: 30 }); // 30 ms/token: the slowest
    dog.beat({ type: 'pass-end', tokens: 10, ms: 20 }); // 2 ms/token: slower one kept
    expect(dog.msPerToken).toBe(30);
    dog.beat({ type: 'pass-start', tokens: 50 });
    expect(dog.allowedMs()).toBe(1000 + 50 * 30 * 4);
    at(530 + 7000);
    expect(tick()).toBe('ok');
    at(530 + 7001);
    expect(tick()).toBe('hung');
  });

  it('a load may block for loadAfterMs', () => {
    const { dog, at, tick } = clocked();
    at(0);
    tick();
    dog.beat({ type: 'load-start' });
    at(60_000);
    expect(tick()).toBe('ok');
    at(60_001);
    expect(tick()).toBe('hung');
    dog.beat({ type: 'load-end' });
    expect(dog.allowedMs()).toBe(1000);
  });

  it('late ticks (timers throttled in a background tab) never make a false hang', () => {
    const { dog, at, tick } = clocked();
    at(0);
    expect(tick()).toBe('ping');
    at(3);
    dog.pong();
    // The next tick comes a minute late: it only sends a ping.
    at(60_000);
    expect(tick()).toBe('ping');
    at(60_002);
    dog.pong();
    at(120_000);
    expect(tick()).toBe('ping');
  });

  it('refuses limits that are not positive numbers, naming them', () => {
    expect(() => new HangWatchdog({ hangAfterMs: 0 })).toThrow(/limits\.hangAfterMs must be a positive number/);
    expect(() => new HangWatchdog({ loadAfterMs: Number.NaN })).toThrow(/limits\.loadAfterMs/);
  });
});
