/**
 * A value type's grammar as a machine over bytes: the value's bytes are read one at a time from
 * `start`; `step` gives the next state or null (no well-typed value begins so), and `accepts`
 * whether the bytes so far are a whole value. Every state a machine reaches from `start` has a
 * way on to an accepting one (no dead ends), so a greedy decode that keeps to the machine always
 * ends with a value, provided the vocabulary can write the bytes (token-mask.ts).
 *
 * States are values (numbers or strings, or small frozen objects): a state is never changed, so a
 * walk can keep the states along a path and go back.
 */
export interface ByteAutomaton<S> {
  readonly start: S;
  step(state: S, byte: number): S | null;
  accepts(state: S): boolean;
}

/** `first` then `second`, where `first` must be read whole (a fixed text). */
export function afterFixed<S>(fixed: Uint8Array, inner: ByteAutomaton<S>): ByteAutomaton<{ at: number; inner: S }> {
  if (fixed.length === 0) {
    return {
      start: { at: 0, inner: inner.start },
      step: (s, b) => {
        const next = inner.step(s.inner, b);
        return next === null ? null : { at: 0, inner: next };
      },
      accepts: (s) => inner.accepts(s.inner),
    };
  }
  return {
    start: { at: 0, inner: inner.start },
    step(s, b) {
      if (s.at < fixed.length) return fixed[s.at] === b ? { at: s.at + 1, inner: s.inner } : null;
      const next = inner.step(s.inner, b);
      return next === null ? null : { at: s.at, inner: next };
    },
    accepts: (s) => s.at === fixed.length && inner.accepts(s.inner),
  };
}
