/**
 * The copy constraint of a `text` value: its bytes must be a substring of one of the state's text
 * parts. A suffix automaton (Blumer et al.) over the parts' UTF-8 bytes, joined by 0xFF (a byte
 * UTF-8 never holds, and that the machine never reads, so no value crosses from one part into the
 * next), recognizes exactly their substrings; a walk from its root by the value's bytes stays
 * defined exactly while the value is one. On top of it: the value starts on a character boundary
 * (not with a continuation byte 80–BF), ends on one (a whole character), holds at most `maxBytes`
 * bytes (the character under way at the bound may finish), and, for a list's items, leaves out
 * bytes a JSON string would have to escape (`exclude`).
 *
 * States pack (automaton state, bytes still owed to the current character, length) into one
 * number: a state is a value, as byte-automaton.ts asks.
 */
import type { ByteAutomaton } from './byte-automaton.ts';

export interface SuffixAutomaton {
  /** Transitions per state: byte → state. */
  readonly next: Map<number, number>[];
}

const SEPARATOR = 0xff;

export function suffixAutomaton(parts: readonly Uint8Array[]): SuffixAutomaton {
  const next: Map<number, number>[] = [new Map()];
  const link: number[] = [-1];
  const len: number[] = [0];
  let last = 0;
  const extend = (c: number) => {
    const cur = next.length;
    next.push(new Map());
    len.push(len[last]! + 1);
    link.push(0);
    let p = last;
    while (p !== -1 && !next[p]!.has(c)) {
      next[p]!.set(c, cur);
      p = link[p]!;
    }
    if (p !== -1) {
      const q = next[p]!.get(c)!;
      if (len[p]! + 1 === len[q]) link[cur] = q;
      else {
        const clone = next.length;
        next.push(new Map(next[q]!));
        len.push(len[p]! + 1);
        link.push(link[q]!);
        while (p !== -1 && next[p]!.get(c) === q) {
          next[p]!.set(c, clone);
          p = link[p]!;
        }
        link[q] = clone;
        link[cur] = clone;
      }
    }
    last = cur;
  };
  parts.forEach((bytes, i) => {
    if (i > 0) extend(SEPARATOR);
    for (const b of bytes) extend(b);
  });
  return { next };
}

/** How many continuation bytes a UTF-8 lead byte announces (0 for ASCII). */
function owed(lead: number): number {
  if (lead < 0x80) return 0;
  if (lead >= 0xf0) return 3;
  if (lead >= 0xe0) return 2;
  return 1;
}

// A state: sam * 2^11 + owe * 2^9 + length (length < 512).
const LEN_BITS = 512;
const OWE_BITS = 4;

export function copyAutomaton(sam: SuffixAutomaton, opts: { maxBytes: number; exclude?: (byte: number) => boolean }): ByteAutomaton<number> {
  const maxBytes = Math.min(opts.maxBytes, LEN_BITS - 1);
  const exclude = opts.exclude;
  return {
    start: 0,
    step(s, b) {
      if (b === SEPARATOR || (exclude && exclude(b))) return null;
      const length = s % LEN_BITS;
      const owe = Math.floor(s / LEN_BITS) % OWE_BITS;
      const state = Math.floor(s / (LEN_BITS * OWE_BITS));
      const isCont = b >= 0x80 && b <= 0xbf;
      if (owe > 0 ? !isCont : isCont) return null;
      if (owe === 0 && length >= maxBytes) return null;
      const to = sam.next[state]!.get(b);
      if (to === undefined || length + 1 >= LEN_BITS) return null;
      const nextOwe = owe > 0 ? owe - 1 : owed(b);
      return to * LEN_BITS * OWE_BITS + nextOwe * LEN_BITS + length + 1;
    },
    accepts: (s) => s % LEN_BITS > 0 && Math.floor(s / LEN_BITS) % OWE_BITS === 0,
  };
}
