import { errorMessages, JevError } from '../contract/index.ts';

export interface AdmissionOptions {
  /**
   * Requests (decisions and chats) that may wait behind the one being served; one more is
   * refused with 429 `queue_full` and a `Retry-After`. Default 256: a batch sent at once is served
   * whole, and the parsed bodies the waiting requests hold stay bounded.
   */
  maxQueued?: number;
  now?: () => number;
}

export const DEFAULT_MAX_QUEUED = 256;

/**
 * The bound on the engine's queue, kept where every request enters (the facade: the same for
 * `client.decisions`, `client.chat`, `client.fetch` and the service worker). A request is
 * admitted while fewer than 1 + maxQueued are in flight (one served, the rest waiting), and
 * leaves when it settles, a stream when it ends. The refusal says when to come back: the
 * typical time a request has recently spent in flight, at least 1 s.
 */
export class Admission {
  readonly maxQueued: number;
  readonly #now: () => number;
  #inFlight = 0;
  /** Smoothed time (ms) a request spends from admission to settling. */
  #typicalMs: number | null = null;

  constructor(options: AdmissionOptions = {}) {
    const max = options.maxQueued ?? DEFAULT_MAX_QUEUED;
    if (!Number.isInteger(max) || max < 0) throw new RangeError(`limits.maxQueued must be a whole number ≥ 0, not ${max}`);
    this.maxQueued = max;
    this.#now = options.now ?? (() => performance.now());
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Admits a request or throws `queue_full`; the returned function marks it settled (once). */
  enter(): () => void {
    if (this.#inFlight >= this.maxQueued + 1) {
      const waiting = this.#inFlight - 1;
      const retryAfterS = this.retryAfterSeconds();
      throw new JevError('queue_full', errorMessages.queueFull(waiting, retryAfterS), {
        param: null,
        details: { retry_after_s: retryAfterS, waiting, max_queued: this.maxQueued },
      });
    }
    this.#inFlight += 1;
    const since = this.#now();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight -= 1;
      const took = this.#now() - since;
      this.#typicalMs = this.#typicalMs === null ? took : 0.8 * this.#typicalMs + 0.2 * took;
    };
  }

  /** Whole seconds, 1 to 60. */
  retryAfterSeconds(): number {
    const ms = this.#typicalMs ?? 1000;
    return Math.min(60, Math.max(1, Math.ceil(ms / 1000)));
  }
}
