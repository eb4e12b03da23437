import type { BackendHttp } from './backend-http.ts';
import type { BackendKind } from './cli-args.ts';

/**
 * One decision's log-probability reads: for each item, log P(ids[k] | ids[0..k)) for every k from
 * `from` to the end (`from` ≥ 1), where `ids` is `shared ++ own`. The items of one decision share
 * their state's tokens (`shared`, the same array): held once, not copied into every item.
 */
export interface PromptLogProbItem {
  /** The tokens every item of the request starts with (the same array in each). */
  shared: readonly number[];
  /** This item's own tokens after `shared`. */
  own: readonly number[];
  from: number;
}

/** An item's length in tokens (`shared ++ own`). */
export const itemLength = (item: PromptLogProbItem): number => item.shared.length + item.own.length;

/** An item's token at position `k` of `shared ++ own`. */
export const itemToken = (item: PromptLogProbItem, k: number): number | undefined => (k < item.shared.length ? item.shared[k] : item.own[k - item.shared.length]);

/**
 * A JSON request body `head [ids of each item, as JSON lists] tail`, written as bytes. A decision's
 * items repeat the state's tokens (59 items of ~230 ids at Q = 16): the shared ids are written
 * once per request and copied into each item's place, digit by digit into one buffer, with no
 * string per id or per item.
 */
export function idsBody(head: string, items: readonly PromptLogProbItem[], tail: string): Buffer {
  // At most ID_BYTES per own id (its digits and a comma), the shared ids' exact length once per request.
  let size = Buffer.byteLength(head) + 2 + Buffer.byteLength(tail);
  const copies = new Map<readonly number[], [start: number, end: number]>();
  let sharedBytes = 0;
  for (const item of items) {
    if (!copies.has(item.shared)) {
      copies.set(item.shared, [0, 0]);
      sharedBytes = Math.max(sharedBytes, item.shared.length * ID_BYTES);
    }
    size += 4 + item.own.length * ID_BYTES;
  }
  size += items.length * sharedBytes;
  copies.clear();
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0, 'utf8');
  out[at++] = 0x5b; // [
  items.forEach((item, i) => {
    if (i > 0) out[at++] = 0x2c; // ,
    out[at++] = 0x5b;
    const copy = copies.get(item.shared);
    if (copy) {
      at += out.copy(out, at, copy[0], copy[1]);
    } else {
      const start = at;
      at = writeIds(out, at, item.shared);
      copies.set(item.shared, [start, at]);
    }
    if (item.own.length > 0) {
      if (item.shared.length > 0) out[at++] = 0x2c;
      at = writeIds(out, at, item.own);
    }
    out[at++] = 0x5d; // ]
  });
  out[at++] = 0x5d;
  at += out.write(tail, at, 'utf8');
  return out.subarray(0, at);
}

/** Bytes an id may take in idsBody: up to 7 digits (ids below 10^7: vocabularies hold a few 100 000) and its comma. */
const ID_BYTES = 8;
const MAX_ID = 9_999_999;

/** Writes `ids` as JSON numbers joined by commas at `at`; returns the end. */
function writeIds(out: Buffer, at: number, ids: readonly number[]): number {
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
  return at;
}

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
