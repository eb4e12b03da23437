import type { BackendTokenization, PromptLogProbItem, ServingBackend } from './backend.ts';
import { BackendHttp, type BackendHttpOptions } from './backend-http.ts';
import { postTokenize } from './backend-tokenize.ts';
import type { BackendKind } from './cli-args.ts';

/**
 * What every serving engine's backend shares (sglang-backend.ts, vllm-backend.ts): its HTTP client
 * with the server's timeout and fault rules (backend-http.ts), the count of requests it sent, and
 * `POST /tokenize`, the same on both engines (backend-tokenize.ts). An engine's file writes only
 * its `promptLogProbs`: the one request that differs.
 */
export abstract class HttpServingBackend<K extends BackendKind> implements ServingBackend {
  readonly http: BackendHttp;

  constructor(
    readonly kind: K,
    options: Omit<BackendHttpOptions, 'kind'>,
    readonly model: string,
  ) {
    this.http = new BackendHttp({ ...options, kind });
  }

  get url(): string {
    return this.http.url;
  }

  get requests(): number {
    return this.http.requests;
  }

  abstract promptLogProbs(items: readonly PromptLogProbItem[], signal: AbortSignal | undefined): Promise<number[][]>;

  tokenize(text: string, signal: AbortSignal | undefined): Promise<BackendTokenization> {
    return postTokenize(this.http, this.model, text, signal);
  }
}
