import type { EngineBeat } from '../protocol/supervision.ts';

export interface HangWatchdogOptions {
  /**
   * How long the engine may leave a ping unanswered outside a forward pass and a load (ms,
   * default 15,000). Its worker's thread is blocked only inside a pass or while a model's
   * session is created; between them it answers within milliseconds.
   */
  hangAfterMs?: number;
  /** How long a model load may block the worker's thread (ms, default 600,000). */
  loadAfterMs?: number;
  /**
   * The time a forward pass of n tokens may take is hangAfterMs + n × (the slowest ms per token
   * seen on this engine, or this default before any pass ended) × `passMargin`.
   */
  msPerTokenBeforeMeasured?: number;
  passMargin?: number;
  now?: () => number;
}

export const HANG_DEFAULTS = { hangAfterMs: 15_000, loadAfterMs: 600_000, msPerTokenBeforeMeasured: 50, passMargin: 8 } as const;

/**
 * Tells a hung engine (alive, but stuck: a loop, a deadlock, a readback that never returns) from a
 * busy one, without mistaking a long prefill for a hang. The worker answers pings from its event
 * loop and beats around every forward pass and load (protocol/supervision.ts): the supervisor
 * pings it on a timer, and it is hung when a ping stays unanswered, with no other sign of life,
 * for longer than what it is doing may take — hangAfterMs between passes, a time in proportion
 * to the pass's tokens inside one (learnt from the passes that ended), loadAfterMs inside a load.
 * A page whose timers are throttled (a background tab) sends pings late, never too early, so it
 * can only see a hang later, never a false one.
 */
export class HangWatchdog {
  readonly #o: Required<Omit<HangWatchdogOptions, 'now'>>;
  readonly #now: () => number;
  #lastSign: number;
  #pingSentAt: number | null = null;
  #pass: { tokens: number; since: number } | null = null;
  #loadingSince: number | null = null;
  #msPerToken: number | null = null;

  constructor(options: HangWatchdogOptions = {}) {
    this.#o = {
      hangAfterMs: options.hangAfterMs ?? HANG_DEFAULTS.hangAfterMs,
      loadAfterMs: options.loadAfterMs ?? HANG_DEFAULTS.loadAfterMs,
      msPerTokenBeforeMeasured: options.msPerTokenBeforeMeasured ?? HANG_DEFAULTS.msPerTokenBeforeMeasured,
      passMargin: options.passMargin ?? HANG_DEFAULTS.passMargin,
    };
    for (const [k, v] of Object.entries(this.#o)) {
      if (!(typeof v === 'number' && Number.isFinite(v) && v > 0)) throw new RangeError(`limits.${k} must be a positive number, not ${v}`);
    }
    this.#now = options.now ?? (() => performance.now());
    this.#lastSign = this.#now();
  }

  /** How often `tick` should run (ms). */
  get intervalMs(): number {
    return Math.max(50, Math.min(1000, this.#o.hangAfterMs / 4));
  }

  /** The slowest pass seen, per token (ms); null before the first pass ends. */
  get msPerToken(): number | null {
    return this.#msPerToken;
  }

  /** A beat from the worker. */
  beat(beat: EngineBeat): void {
    const now = this.#now();
    this.#lastSign = now;
    switch (beat.type) {
      case 'pass-start':
        this.#pass = { tokens: beat.tokens, since: now };
        break;
      case 'pass-end': {
        this.#pass = null;
        const perToken = beat.ms / Math.max(1, beat.tokens);
        if (Number.isFinite(perToken)) this.#msPerToken = Math.max(this.#msPerToken ?? 0, perToken);
        break;
      }
      case 'load-start':
        this.#loadingSince = now;
        break;
      case 'load-end':
        this.#loadingSince = null;
        break;
      default: {
        const never: never = beat;
        void never;
      }
    }
  }

  /** The answer to a ping. */
  pong(): void {
    this.#lastSign = this.#now();
    this.#pingSentAt = null;
  }

  /**
   * One check. Returns `ping` when a ping should be sent now, `hung` (with why) when the engine
   * is hung, else `ok`.
   */
  tick(): { verdict: 'ok' } | { verdict: 'ping' } | { verdict: 'hung'; message: string } {
    const now = this.#now();
    if (this.#pingSentAt === null) {
      this.#pingSentAt = now;
      return { verdict: 'ping' };
    }
    const silent = now - Math.max(this.#lastSign, this.#pingSentAt);
    const unanswered = now - this.#pingSentAt;
    const allowed = this.allowedMs();
    if (unanswered > allowed && silent > allowed) {
      return { verdict: 'hung', message: `the engine worker stopped answering for ${seconds(unanswered)} s ${this.#doing()} (allowed: ${seconds(allowed)} s)` };
    }
    return { verdict: 'ok' };
  }

  /** How long the engine may stay silent now, given what it is doing. */
  allowedMs(): number {
    const { hangAfterMs, loadAfterMs, msPerTokenBeforeMeasured, passMargin } = this.#o;
    if (this.#loadingSince !== null) return Math.max(hangAfterMs, loadAfterMs);
    if (this.#pass) return hangAfterMs + this.#pass.tokens * (this.#msPerToken ?? msPerTokenBeforeMeasured) * passMargin;
    return hangAfterMs;
  }

  #doing(): string {
    if (this.#loadingSince !== null) return 'while loading a model';
    if (this.#pass) return `in a forward pass of ${this.#pass.tokens} token${this.#pass.tokens === 1 ? '' : 's'}`;
    return 'between forward passes';
  }
}

/** Seconds for a message: one decimal below 10 s. */
function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000));
}

/** A running watchdog: feed it the worker's beats and pongs; it pings on its own timer. */
export interface WatchdogHandle {
  beat(beat: EngineBeat): void;
  pong(): void;
  stop(): void;
}

/**
 * Runs a HangWatchdog on a timer: `ping(seq)` sends a ping to the worker, `onHung(message)` is
 * called once when it is hung (the timer then stops).
 */
export function startWatchdog(options: HangWatchdogOptions, ping: (seq: number) => void, onHung: (message: string) => void): WatchdogHandle {
  const watchdog = new HangWatchdog(options);
  let seq = 0;
  const timer = setInterval(() => {
    const check = watchdog.tick();
    if (check.verdict === 'ping') ping(++seq);
    else if (check.verdict === 'hung') {
      clearInterval(timer);
      onHung(check.message);
    }
  }, watchdog.intervalMs);
  return { beat: (b) => watchdog.beat(b), pong: () => watchdog.pong(), stop: () => clearInterval(timer) };
}
