/**
 * A field's value decoded greedily under its machine, one step per distribution it is given: at
 * each step the tokens the machine allows (token-mask.ts), and the end tokens where the bytes so
 * far are a whole value; the most probable of them (the lowest id on a tie). `confidence` is the
 * product of each chosen token's probability renormalised over the allowed ones. Where only an end
 * is allowed, the value ends without a pass (probability 1). A step with nothing allowed, or a
 * value that would not fit the context, is a refusal.
 *
 * It makes no pass itself: `pending` is the token whose pass it needs next (null once `done`), and
 * `feed` takes that pass's distribution. So one field can be driven alone (decode-field.ts) or
 * side by side with others in batched passes (decode-rows.ts), with the same steps either way.
 */
import type { ByteAutomaton } from './byte-automaton.ts';
import type { LogProbs } from '../model/log-softmax.ts';
import { allowedTokens, type Allowed } from './token-mask.ts';
import type { TokenBytes } from './token-bytes.ts';

export class ValueDecoder<S> {
  readonly valueIds: number[] = [];
  /** Each value token's renormalised probability under the mask. */
  readonly tokenProbs: number[] = [];
  confidence = 1;
  refused = false;
  done = false;
  /** The chosen token not fed yet: the next pass is over it. */
  pending: number | null = null;
  /** Value tokens fed (passes made for this value). */
  fed = 0;
  #state: S;
  #allowed: Allowed<S>;
  #step = 0;

  constructor(
    private readonly table: TokenBytes,
    private readonly machine: ByteAutomaton<S>,
    private readonly maxSteps: number,
    /** Value tokens that still fit the context. */
    private readonly contextLeft: number,
  ) {
    this.#state = machine.start;
    this.#allowed = allowedTokens(table, machine, this.#state);
  }

  /** The tokens a value may start with (for `pNull`). */
  get firstAllowed(): readonly number[] {
    return this.#allowed.ids;
  }

  /** The first step, from the prompt's distribution. */
  start(rootLogProbs: LogProbs): void {
    if (!this.#stops()) this.#choose(rootLogProbs);
  }

  /** The distribution after `pending` (read here, before `feed` returns). */
  feed(logProbs: LogProbs): void {
    if (this.done || this.pending === null) throw new Error('ValueDecoder.feed: no pending token');
    this.pending = null;
    this.fed += 1;
    this.#choose(logProbs);
  }

  /** Whether the step about to be taken ends the value (setting `done`, and `refused` where it is not whole). */
  #stops(): boolean {
    const accepting = this.machine.accepts(this.#state);
    const none = this.#allowed.ids.length === 0;
    if (accepting && none) return (this.done = true); // only an end: probability 1
    if (this.#step >= this.maxSteps || (none && !accepting) || (this.pending !== null && this.valueIds.length >= this.contextLeft)) {
      this.refused = !accepting;
      return (this.done = true);
    }
    return false;
  }

  #choose(lp: LogProbs): void {
    const accepting = this.machine.accepts(this.#state);
    const allowed = this.#allowed;
    let best = -1;
    let bestLp = -Infinity;
    let total = 0;
    const consider = (id: number) => {
      const v = lp.at(id)!;
      total += Math.exp(v);
      if (v > bestLp || (v === bestLp && id < best)) {
        bestLp = v;
        best = id;
      }
    };
    for (const id of allowed.ids) consider(id);
    const ends = accepting ? this.table.endTokens : [];
    for (const id of ends) consider(id);
    if (best < 0 || total <= 0) {
      this.refused = !accepting;
      this.done = true;
      return;
    }
    const p = Math.exp(bestLp) / total;
    this.confidence *= p;
    if (ends.includes(best) && !allowed.ids.includes(best)) {
      this.done = true;
      return;
    }
    this.#state = allowed.after[allowed.ids.indexOf(best)]!;
    this.valueIds.push(best);
    this.tokenProbs.push(p);
    this.pending = best;
    this.#allowed = allowedTokens(this.table, this.machine, this.#state);
    this.#step += 1;
    this.#stops();
  }
}
