/**
 * Turns generated token ids into text deltas. The whole generation is decoded each step and
 * only the new part is emitted, so multi-byte characters split across tokens come out whole.
 * Text that could still become a stop sequence is held back until it cannot.
 */
export class TextStream {
  #emitted = 0;
  #text = '';
  stopped = false;

  constructor(
    private readonly decode: (ids: number[]) => string,
    private readonly stops: readonly string[],
  ) {}

  /** The text so far (after a stop sequence cut it, without the stop). */
  get text(): string {
    return this.#text;
  }

  /** Feeds the full list of generated ids; returns the new text safe to emit. */
  update(ids: number[]): string {
    let text = this.decode(ids);
    for (const stop of this.stops) {
      const at = text.indexOf(stop);
      if (at >= 0) {
        text = text.slice(0, at);
        this.stopped = true;
      }
    }
    this.#text = text;
    let safe = text.length;
    if (!this.stopped) {
      if (text.endsWith('\uFFFD')) safe = text.lastIndexOf('\uFFFD');
      for (const stop of this.stops) {
        for (let k = Math.min(stop.length - 1, text.length); k > 0; k--) {
          if (text.endsWith(stop.slice(0, k))) {
            safe = Math.min(safe, text.length - k);
            break;
          }
        }
      }
    }
    if (safe <= this.#emitted) return '';
    const delta = text.slice(this.#emitted, safe);
    this.#emitted = safe;
    return delta;
  }

  /** Everything not yet emitted, at the end of generation. */
  flush(): string {
    const delta = this.#text.slice(this.#emitted);
    this.#emitted = this.#text.length;
    return delta;
  }
}
