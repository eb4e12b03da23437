/**
 * A `list` value: a JSON array of items, `[]` or `[item, item, …]` (one optional space after each
 * comma, none elsewhere), at most MAX_ITEMS items. Items are numbers (number grammar), dates
 * (`"YYYY-MM-DD"`) or texts (`"…"`, copied from a text part: copy-automaton.ts, leaving out the
 * bytes JSON would escape: `"`, `\` and control characters).
 */
import type { ByteAutomaton } from './byte-automaton.ts';

export const MAX_ITEMS = 8;

type Phase = 'open' | 'first' | 'item' | 'comma' | 'space' | 'done';
export interface ListState<S> {
  readonly phase: Phase;
  readonly item: S | null;
  readonly count: number;
  /** Inside a quoted item: 0 before the opening quote, 1 inside, 2 after the closing one. */
  readonly quote: number;
}

export function listAutomaton<S>(item: ByteAutomaton<S>, quoted: boolean): ByteAutomaton<ListState<S>> {
  const st = (phase: Phase, itemState: S | null, count: number, quote = 0): ListState<S> => ({ phase, item: itemState, count, quote });
  const itemDone = (s: ListState<S>) => s.item !== null && (quoted ? s.quote === 2 : item.accepts(s.item));
  // Bytes inside an item.
  const stepItem = (s: ListState<S>, b: number): ListState<S> | null => {
    if (quoted) {
      if (s.quote === 0) return b === 0x22 ? st('item', item.start, s.count, 1) : null;
      if (s.quote === 1) {
        if (b === 0x22) return item.accepts(s.item!) ? st('item', s.item, s.count, 2) : null;
        const n = item.step(s.item!, b);
        return n === null ? null : st('item', n, s.count, 1);
      }
      return null;
    }
    const n = item.step(s.item ?? item.start, b);
    return n === null ? null : st('item', n, s.count);
  };
  const startItem = (s: ListState<S>, b: number, count: number): ListState<S> | null =>
    stepItem(st('item', quoted ? null : item.start, count, 0), b);
  return {
    start: st('open', null, 0),
    step(s, b) {
      switch (s.phase) {
        case 'open':
          return b === 0x5b ? st('first', null, 0) : null;
        case 'first':
          if (b === 0x5d) return st('done', null, 0);
          return startItem(s, b, 1);
        case 'item': {
          const inItem = stepItem(s, b);
          if (inItem) return inItem;
          if (!itemDone(s)) return null;
          if (b === 0x5d) return st('done', null, s.count);
          if (b === 0x2c && s.count < MAX_ITEMS) return st('comma', null, s.count);
          return null;
        }
        case 'comma':
          if (b === 0x20) return st('space', null, s.count);
          return startItem(s, b, s.count + 1);
        case 'space':
          return startItem(s, b, s.count + 1);
        default:
          return null;
      }
    },
    accepts: (s) => s.phase === 'done',
  };
}
