import type { BackendHttp } from './backend-http.ts';
import type { BackendKind } from './cli-args.ts';

/**
 * One decision's log-probability reads: for each item, log P(ids[k] | ids[0..k)) for every k from
 * `from` to the end (`from` ≥ 1). The items of one decision share their state's tokens.
 */
export interface PromptLogProbItem {
  ids: readonly number[];
  from: number;
  /** The tokens `ids` starts with that every item of the request shares (the same array): written into the request's JSON once. */
  shared?: readonly number[];
}

/**
 * An item's `ids` as JSON text. A decision's items repeat the state's tokens (59 items of ~230
 * ids at Q = 16): the shared part is written once per request (`written`, keyed by the array)
 * and each item adds only its own tokens.
 */
export function idsJson(item: PromptLogProbItem, written: Map<readonly number[], string>): string {
  const shared = item.shared;
  if (!shared || shared.length === 0) return `[${item.ids.join(',')}]`;
  let head = written.get(shared);
  if (head === undefined) written.set(shared, (head = shared.join(',')));
  return item.ids.length === shared.length ? `[${head}]` : `[${head},${item.ids.slice(shared.length).join(',')}]`;
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
