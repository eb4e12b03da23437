/**
 * One field's passes after the state's cache: its prompt (the root distribution), the `null`
 * path by teacher forcing, and the value decoded greedily under its type's machine.
 *
 * - `pNull` = A / (A + V): A is the probability of the `null` path (the product of its tokens'
 *   probabilities, as a multi-token label is scored), V the probability of the tokens a value may
 *   start with, less A where `null`'s first token is one of them (its mass that goes on to spell
 *   `null` is the absent answer's, not a value's).
 * - The value: at each step the tokens the machine allows (token-mask.ts), and the end tokens
 *   where the bytes so far are a whole value; the most probable of them (the lowest id on a tie).
 *   `confidence` is the product of each chosen token's probability renormalised over the allowed
 *   ones. Where only an end is allowed, the value ends without a pass (probability 1).
 * - A step with nothing allowed, or a value that would not fit the context, is a refusal.
 *
 * Every cache made here is disposed here; the state's cache is read, never changed.
 */
import { LanguageModel } from '../model/language-model.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { afterFixed, type ByteAutomaton } from './byte-automaton.ts';
import type { FieldPlan } from './field-plan.ts';
import { allowedTokens } from './token-mask.ts';
import { bytesOf, type TokenBytes } from './token-bytes.ts';

export interface DecodedField {
  /** log A: the `null` path's log-probability. */
  nullLogProb: number;
  /** V: the probability of starting a value. */
  valueMass: number;
  pNull: number;
  /** The value's tokens (no end token), or null: refused. */
  valueIds: number[] | null;
  /** Each value token's renormalised probability under the mask. */
  tokenProbs: number[];
  /** Each value token's byte length. */
  tokenLengths: number[];
  /** The value's bytes (the preamble taken off). */
  bytes: Uint8Array;
  /** The preamble's length: the value tokens' bytes begin this many bytes before `bytes`. */
  bytesBefore: number;
  confidence: number;
  /** Tokens fed: the prompt, the null row, the value's. */
  fed: number;
}

export async function decodeField(
  lm: LanguageModel,
  table: TokenBytes,
  stateCache: KvCache,
  stateTokens: number,
  plan: FieldPlan,
  machine: ByteAutomaton<unknown>,
  maxSteps: number,
  signal: AbortSignal | undefined,
): Promise<DecodedField> {
  const promptPass = await lm.forward(plan.promptIds, stateCache, 1);
  let rootLogProbs: Float64Array;
  try {
    rootLogProbs = LanguageModel.logProbsAt(promptPass.logits, -1);
  } finally {
    promptPass.logits.dispose();
  }
  let cache = promptPass.cache;
  let fed = plan.promptIds.length;
  try {
    // The null path, teacher-forced.
    let nullLogProb = rootLogProbs[plan.nullPath[0]!]!;
    if (plan.nullPath.length > 1) {
      signal?.throwIfAborted();
      const row = plan.nullPath.slice(0, -1);
      const pass = await lm.forward(row, cache, 0);
      pass.cache.dispose();
      try {
        for (let j = 1; j < plan.nullPath.length; j++) nullLogProb += LanguageModel.logProbsAt(pass.logits, j - 1)[plan.nullPath[j]!]!;
      } finally {
        pass.logits.dispose();
      }
      fed += row.length;
    }

    const m = afterFixed(plan.preamble, machine);
    let state = m.start;
    let allowed = allowedTokens(table, m, state);
    let valueMass = 0;
    for (const id of allowed.ids) valueMass += Math.exp(rootLogProbs[id]!);
    const a = Math.exp(nullLogProb);
    if (allowed.ids.includes(plan.nullPath[0]!)) valueMass = Math.max(0, valueMass - a);
    const pNull = a + valueMass > 0 ? a / (a + valueMass) : 1;

    const valueIds: number[] = [];
    const tokenProbs: number[] = [];
    let logProbs: Float64Array | null = rootLogProbs;
    let pending: number | null = null; // chosen, not fed yet
    let confidence = 1;
    let refused = false;
    const contextLeft = lm.contextLength - stateTokens - plan.promptIds.length;
    for (let step = 0; ; step++) {
      const accepting = m.accepts(state);
      if (accepting && allowed.ids.length === 0) break; // only an end: probability 1
      if (step >= maxSteps || (allowed.ids.length === 0 && !accepting) || (pending !== null && valueIds.length >= contextLeft)) {
        refused = !accepting;
        break;
      }
      signal?.throwIfAborted();
      if (pending !== null) {
        const pass = await lm.forward([pending], cache, 1);
        cache.dispose();
        cache = pass.cache;
        try {
          logProbs = LanguageModel.logProbsAt(pass.logits, -1);
        } finally {
          pass.logits.dispose();
        }
        fed += 1;
        pending = null;
      }
      const lp = logProbs!;
      let best = -1;
      let bestLp = -Infinity;
      let total = 0;
      const consider = (id: number) => {
        const v = lp[id]!;
        total += Math.exp(v);
        if (v > bestLp || (v === bestLp && id < best)) {
          bestLp = v;
          best = id;
        }
      };
      for (const id of allowed.ids) consider(id);
      const ends = accepting ? table.endTokens : [];
      for (const id of ends) consider(id);
      if (best < 0 || total <= 0) {
        refused = !accepting;
        break;
      }
      const p = Math.exp(bestLp) / total;
      confidence *= p;
      if (ends.includes(best) && !allowed.ids.includes(best)) break;
      state = allowed.after[allowed.ids.indexOf(best)]!;
      valueIds.push(best);
      tokenProbs.push(p);
      pending = best;
      allowed = allowedTokens(table, m, state);
    }
    const parts = valueIds.map((id) => bytesOf(table, id));
    const all = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
    let at = 0;
    for (const b of parts) {
      all.set(b, at);
      at += b.length;
    }
    return {
      nullLogProb,
      valueMass,
      pNull,
      valueIds: refused ? null : valueIds,
      tokenProbs,
      tokenLengths: parts.map((b) => b.length),
      bytes: all.subarray(plan.preamble.length),
      bytesBefore: plan.preamble.length,
      confidence,
      fed,
    };
  } finally {
    cache.dispose();
  }
}
