import { partialMarkerLength } from './partial-marker.ts';

/**
 * Turns generated token ids into text deltas. The whole generation is decoded each step and
 * only the new part is emitted, so multi-byte characters split across tokens come out whole.
 * Text that could still become a stop sequence is held back until it cannot.
 *
 * Each token may come with an item (its logprobs entry): an item is held back with its token's
 * text and released with the delta that completes that text; when a stop sequence cuts the
 * text, the items of tokens that begin at or after the cut are dropped, as the text is.
 */
export class TextStream<T = never> {
  #emitted = 0;
  #text = '';
  /** The decoded length before the newest token: where its text begins. */
  #decoded = 0;
  #pending: { start: number; end: number; item: T }[] = [];
  stopped = false;

  constructor(
    private readonly decode: (ids: number[]) => string,
    private readonly stops: readonly string[],
  ) {}

  /** The text so far (after a stop sequence cut it, without the stop). */
  get text(): string {
    return this.#text;
  }

  /** Feeds the full list of generated ids (and the newest token's item); returns the new text safe to emit and the items it releases. */
  update(ids: number[], ...item: [] | [T]): { text: string; items: T[] } {
    let text = this.decode(ids);
    const start = Math.min(this.#decoded, text.length);
    this.#decoded = text.length;
    if (item.length > 0) this.#pending.push({ start, end: text.length, item: item[0] as T });
    for (const stop of this.stops) {
      const at = text.indexOf(stop);
      if (at >= 0) {
        text = text.slice(0, at);
        this.stopped = true;
      }
    }
    this.#text = text;
    let safe = text.length;
    if (this.stopped) {
      this.#pending = this.#pending.filter((p) => p.start < text.length);
    } else {
      if (text.endsWith('\uFFFD')) safe = text.lastIndexOf('\uFFFD');
      safe = Math.min(safe, text.length - partialMarkerLength(text, this.stops));
    }
    const delta = safe <= this.#emitted ? '' : text.slice(this.#emitted, safe);
    this.#emitted = Math.max(this.#emitted, safe);
    return { text: delta, items: this.#release(this.stopped ? Infinity : this.#emitted) };
  }

  /** Everything not yet emitted, at the end of generation. */
  flush(): { text: string; items: T[] } {
    const delta = this.#text.slice(this.#emitted);
    this.#emitted = this.#text.length;
    return { text: delta, items: this.#release(Infinity) };
  }

  /** The held items whose text ends by `upTo`, in order. */
  #release(upTo: number): T[] {
    const out: T[] = [];
    while (this.#pending.length > 0 && this.#pending[0]!.end <= upTo) out.push(this.#pending.shift()!.item);
    return out;
  }
}
