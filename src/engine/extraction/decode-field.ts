/**
 * One field's passes after the state's cache: its prompt (the root distribution), the `null`
 * path by teacher forcing, and the value decoded greedily under its type's machine
 * (value-decoder.ts), here alone, or beside other fields in batched passes (decode-rows.ts).
 *
 * - `pNull` = A / (A + V): A is the probability of the `null` path (the product of its tokens'
 *   probabilities, as a multi-token label is scored), V the probability of the tokens a value may
 *   start with, less A where `null`'s first token is one of them (its mass that goes on to spell
 *   `null` is the absent answer's, not a value's).
 * - The value: value-decoder.ts.
 *
 * The cache after a field's prompt is its caller's (`OpenField.cache`: `decodeAlone` advances it,
 * decode-rows.ts stacks it); every other cache made here is disposed here. The state's cache is
 * read, never changed.
 */
import { LanguageModel } from '../model/language-model.ts';
import type { KvCache } from '../model/kv-cache.ts';
import { afterFixed, type ByteAutomaton } from './byte-automaton.ts';
import type { FieldPlan } from './field-plan.ts';
import { bytesOf, type TokenBytes } from './token-bytes.ts';
import { ValueDecoder } from './value-decoder.ts';

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

/** A field after its prompt and `null` passes: its value's decoder started, and the cache after its prompt (owned here until `decodedField`'s caller disposes it). */
export interface OpenField {
  plan: FieldPlan;
  nullLogProb: number;
  valueMass: number;
  pNull: number;
  decoder: ValueDecoder<unknown>;
  /** The cache after the prompt; the caller disposes it. */
  cache: KvCache;
  /** Tokens fed so far: the prompt and the null row. */
  fed: number;
}

/** The prompt's pass, the `null` path, and the value's first step (from the prompt's distribution). */
export async function openField(
  lm: LanguageModel,
  table: TokenBytes,
  stateCache: KvCache,
  stateTokens: number,
  plan: FieldPlan,
  machine: ByteAutomaton<unknown>,
  maxSteps: number,
  signal: AbortSignal | undefined,
): Promise<OpenField> {
  const promptPass = await lm.forward(plan.promptIds, stateCache, 1);
  let rootLogProbs: Float64Array;
  try {
    rootLogProbs = LanguageModel.logProbsAt(promptPass.logits, -1);
  } finally {
    promptPass.logits.dispose();
  }
  const cache = promptPass.cache;
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
    const contextLeft = lm.contextLength - stateTokens - plan.promptIds.length;
    const decoder = new ValueDecoder(table, afterFixed(plan.preamble, machine), maxSteps, contextLeft);
    let valueMass = 0;
    for (const id of decoder.firstAllowed) valueMass += Math.exp(rootLogProbs[id]!);
    const a = Math.exp(nullLogProb);
    if (decoder.firstAllowed.includes(plan.nullPath[0]!)) valueMass = Math.max(0, valueMass - a);
    const pNull = a + valueMass > 0 ? a / (a + valueMass) : 1;
    decoder.start(rootLogProbs);
    return { plan, nullLogProb, valueMass, pNull, decoder, cache, fed };
  } catch (e) {
    cache.dispose();
    throw e;
  }
}

/** The field once its decoder is done. */
export function decodedField(table: TokenBytes, open: OpenField): DecodedField {
  const { decoder, plan } = open;
  const parts = decoder.valueIds.map((id) => bytesOf(table, id));
  const all = new Uint8Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) {
    all.set(b, at);
    at += b.length;
  }
  return {
    nullLogProb: open.nullLogProb,
    valueMass: open.valueMass,
    pNull: open.pNull,
    valueIds: decoder.refused ? null : decoder.valueIds,
    tokenProbs: decoder.tokenProbs,
    tokenLengths: parts.map((b) => b.length),
    bytes: all.subarray(plan.preamble.length),
    bytesBefore: plan.preamble.length,
    confidence: decoder.confidence,
    fed: open.fed + decoder.fed,
  };
}

/** Runs an open field's decoder to its end with passes of batch 1 over its own cache (`open.cache` advances; the caller disposes it). */
export async function decodeAlone(lm: LanguageModel, open: OpenField, signal: AbortSignal | undefined): Promise<void> {
  const { decoder } = open;
  while (!decoder.done) {
    signal?.throwIfAborted();
    const pass = await lm.forward([decoder.pending!], open.cache, 1);
    open.cache.dispose();
    open.cache = pass.cache;
    try {
      decoder.feed(LanguageModel.logProbRowAt(pass.logits, -1));
    } finally {
      pass.logits.dispose();
    }
  }
}
