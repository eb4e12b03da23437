/**
 * The tokens a value may continue with: every token whose bytes, read by the value's machine from
 * its state, stay defined (byte-automaton.ts). A walk over the vocabulary in the order of its bytes
 * (token-bytes.ts): each distinct token prefix is stepped once, and every token that shares a
 * prefix the machine refuses is skipped by its common-prefix length alone, so a step costs one
 * pass over an integer array plus the machine's steps on live prefixes: for a copied text, only
 * the tokens that occur in the state.
 */
import type { ByteAutomaton } from './byte-automaton.ts';
import type { TokenBytes } from './token-bytes.ts';

export interface Allowed<S> {
  /** Token ids allowed, and the machine's state after each. */
  readonly ids: number[];
  readonly after: S[];
}

export function allowedTokens<S>(table: TokenBytes, machine: ByteAutomaton<S>, from: S): Allowed<S> {
  const { order, lcp, data, start, length } = table;
  const ids: number[] = [];
  const after: S[] = [];
  const states: (S | null)[] = [from];
  let valid = 0; // states[0..valid] hold the states along the previous token's bytes
  let deadAt = -1; // the previous token died reading its byte at this index (-1: it did not)
  for (let i = 0; i < order.length; i++) {
    const common = lcp[i]!;
    if (deadAt >= 0 && common > deadAt) continue; // shares the refused prefix
    const id = order[i]!;
    const n = length[id]!;
    const at = start[id]!;
    let d = Math.min(common, valid);
    let s = states[d] as S;
    deadAt = -1;
    for (; d < n; d++) {
      const next = machine.step(s, data[at + d]!);
      if (next === null) {
        deadAt = d;
        break;
      }
      s = next;
      states[d + 1] = s;
    }
    if (deadAt >= 0) {
      valid = deadAt;
      continue;
    }
    valid = n;
    ids.push(id);
    after.push(s);
  }
  return { ids, after };
}
