import type { BackendHttp } from './backend-http.ts';
import type { BackendKind } from './cli-args.ts';

/**
 * One decision's log-probability reads: for each item, log P(ids[k] | ids[0..k)) for every k from
 * `from` to the end (`from` ≥ 1), where `ids` is its segments one after the other. The items of
 * one decision share their state's tokens, and a question's continuations its prompt: a shared
 * segment is the same array in each item, held once, not copied into every item.
 */
export interface PromptLogProbItem {
  /** The item's tokens: `segments[0] ++ segments[1] ++ …`. */
  segments: readonly (readonly number[])[];
  from: number;
}

/** An item's length in tokens. */
export function itemLength(item: PromptLogProbItem): number {
  let n = 0;
  for (const s of item.segments) n += s.length;
  return n;
}

/** An item's token at position `k`. */
export function itemToken(item: PromptLogProbItem, k: number): number | undefined {
  for (const s of item.segments) {
    if (k < s.length) return s[k];
    k -= s.length;
  }
  return undefined;
}

/**
 * A JSON request body `head [each item's ids, as a JSON list] tail`, written as bytes. A decision's
 * items repeat the state's ids (59 items of ~230 ids at Q = 16) and each question's prompt: a
 * segment's text is written digit by digit once and copied into each item's place, and kept with
 * its array (`segmentBytes`) for the next request that holds the same array (the state's memoized
 * ids, a memoized question plan's prompt: state-memo.ts, question-plan.ts). No string per id,
 * per item, or for the body.
 */
export function idsBody(head: string, items: readonly PromptLogProbItem[], tail: string): Buffer {
  const bytes = new Map<readonly number[], Buffer>();
  let size = Buffer.byteLength(head) + 2 + Buffer.byteLength(tail);
  for (const item of items) {
    size += 3; // `,[` … `]`
    let n = 0;
    for (const segment of item.segments) {
      if (segment.length === 0) continue;
      let b = bytes.get(segment);
      if (b === undefined) bytes.set(segment, (b = segmentBytes(segment)));
      size += b.length + (n++ > 0 ? 1 : 0);
    }
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0, 'utf8');
  out[at++] = 0x5b; // [
  items.forEach((item, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    out[at++] = 0x5b;
    let n = 0;
    for (const segment of item.segments) {
      if (segment.length === 0) continue;
      if (n++ > 0) out[at++] = 0x2c;
      at += bytes.get(segment)!.copy(out, at);
    }
    out[at++] = 0x5d; // ]
  });
  out[at++] = 0x5d;
  at += out.write(tail, at, 'utf8');
  return out.subarray(0, at);
}

/** Segments of at least this many ids keep their bytes with their array (weakly: gone with it). */
const KEEP_FROM = 8;
const kept = new WeakMap<readonly number[], Buffer>();

/** `ids` as JSON numbers joined by commas (token ids: integers ≥ 0). */
function segmentBytes(ids: readonly number[]): Buffer {
  const hit = kept.get(ids);
  if (hit) return hit;
  const out = Buffer.allocUnsafe(ids.length * ID_BYTES);
  let at = 0;
  for (let i = 0; i < ids.length; i++) {
    if (i > 0) out[at++] = 0x2c;
    let id = ids[i]!;
    if (!(Number.isInteger(id) && id >= 0 && id <= MAX_ID)) throw new Error(`idsBody: ${id} is not a token id`);
    const end = (at += id < 10 ? 1 : id < 100 ? 2 : id < 1000 ? 3 : id < 10_000 ? 4 : id < 100_000 ? 5 : id < 1_000_000 ? 6 : 7);
    let p = end;
    do {
      out[--p] = 0x30 + (id % 10);
      id = Math.floor(id / 10);
    } while (id > 0);
  }
  const b = out.subarray(0, at);
  // Kept only for arrays that cannot change under it (frozen, or the memo's: both read-only by contract).
  if (ids.length >= KEEP_FROM && Object.isFrozen(ids)) kept.set(ids, b);
  return b;
}

/** Bytes an id may take: up to 7 digits (ids below 10^7: vocabularies hold a few 100 000) and its comma. */
const ID_BYTES = 8;
const MAX_ID = 9_999_999;

/** What the serving engine's tokenizer gives for a text, and its context length where it says. */
export interface BackendTokenization {
  ids: number[];
  maxModelLen: number | null;
}

/**
 * A serving engine behind the server: one interface, one file per engine (sglang-backend.ts,
 * vllm-backend.ts), as vLLM's structured-output backends and SGLang's grammar backends are laid
 * out. Each method makes its requests through backend-http.ts, which turns every fault into a
 * JevError (503 `backend_unavailable`, 504 `backend_timeout`, 502 `backend_bad_reply`).
 */
export interface ServingBackend {
  readonly kind: BackendKind;
  readonly url: string;
  /**
   * Every item's prompt log-probabilities, in one request: SGLang's `/generate` with a batch of
   * `input_ids`, vLLM's `/v1/completions` with a batch of token-id prompts and `prompt_logprobs`.
   * Result `[i][k - from]` is log P(ids[k] | ids[0..k)) of item i.
   */
  promptLogProbs(items: readonly PromptLogProbItem[], signal: AbortSignal | undefined): Promise<number[][]>;
  /** The engine's own tokenization of `text` without special tokens (its POST /tokenize), for the start-up check. */
  tokenize(text: string, signal: AbortSignal | undefined): Promise<BackendTokenization>;
  /** HTTP to the engine with the server's timeout and fault rules; chat is relayed through it (chat-relay.ts). */
  readonly http: BackendHttp;
  /** HTTP requests sent to the engine so far (the bench counts them per decision). */
  readonly requests: number;
}
