import {
  JevError,
  parseChatRequest,
  parseDecisionRequest,
  parseExtractionRequest,
  type ChatCompletion,
  type ChatRequest,
  type DecisionRequest,
  type DecisionResponse,
  type ExtractionRequest,
  type ExtractionResponse,
  type ModelList,
} from '../contract/index.ts';
import type { CallHandle } from '../protocol/engine-api.ts';
import { refuseFarPastContext } from './model/context-bound.ts';
import type { TokenizerModel } from './model/tokenizer-model.ts';

/** What the front needs of a loaded model: its name, and its tokenizer and bound for the context check. */
export type FrontModel = Pick<TokenizerModel, 'id' | 'encode' | 'contextLength'>;

/** The first day of the engine (2025-11-22), the `created` of every model the list names. */
const CREATED = 1_763_769_600;

export interface RequestFrontOptions<M extends FrontModel> {
  /** The `owned_by` of the models the list names: `local` in the browser, the serving engine's kind on the server. */
  ownedBy: string;
  /**
   * Runs `work` on the model once it is ready, the engine's own way (the browser's engine: in its
   * queue, one request at a time; the server's: at once, beside the others). `signal` is the
   * call's: `cancel(call.id)` aborts it.
   */
  serve<T>(signal: AbortSignal, work: (model: M) => Promise<T>): Promise<T>;
}

/**
 * The request front both engines share: `Engine` (engine.ts, a model in the browser) and
 * `RemoteEngine` (server/remote-engine.ts, a serving engine behind Node). Every body is validated
 * here, at the boundary (contract/), so that inside, the computation trusts its input; a decision
 * far past the model's context is refused before any pass (model/context-bound.ts); a chat
 * names the model it asks for (`jev` or the loaded model's id, else `model_not_found`); every
 * call can be cancelled by its id while it runs; the model list names `jev` and the model loaded.
 * Calibration profiles named by id are resolved before the engine, by the facade's
 * `ProfileStore`; those given inline are checked by `decide` (decision/apply-calibration.ts).
 */
export class RequestFront<M extends FrontModel> {
  readonly #o: RequestFrontOptions<M>;
  readonly #calls = new Map<string, AbortController>();

  constructor(options: RequestFrontOptions<M>) {
    this.#o = options;
  }

  /** A decision: validated, then `work` on the ready model, once the state is known to fit. */
  async decide(body: unknown, call: CallHandle, work: (model: M, request: DecisionRequest, signal: AbortSignal) => Promise<DecisionResponse>): Promise<DecisionResponse> {
    const request = parseDecisionRequest(body);
    return this.#serve(call, (model, signal) => {
      refuseFarPastContext(model, request);
      return work(model, request, signal);
    });
  }

  /** An extraction: validated, then `work` on the ready model, once the state is known to fit. */
  async extract(body: unknown, call: CallHandle, work: (model: M, request: ExtractionRequest, signal: AbortSignal) => Promise<ExtractionResponse>): Promise<ExtractionResponse> {
    const request = parseExtractionRequest(body);
    return this.#serve(call, (model, signal) => {
      refuseFarPastContext(model, { state: request.state, questions: {} });
      return work(model, request, signal);
    });
  }

  /**
   * A chat completion: validated (once), then `work` on the ready model, once the model it names is
   * this one. `ahead` (a grammar compiled before the request's turn; null where there is none,
   * so that the request is queued at once) runs first, outside the engine's queue, as part of the call: a cancel while it runs ends the call at once, with the
   * same abort as a cancel in the queue; what it started (a compile on a grammar worker) finishes
   * on its own and is cached.
   */
  async chat(
    body: unknown,
    call: CallHandle,
    work: (model: M, request: ChatRequest, signal: AbortSignal) => Promise<ChatCompletion>,
    ahead?: (request: ChatRequest) => Promise<void> | null,
  ): Promise<ChatCompletion> {
    const request = parseChatRequest(body);
    return this.#serve(
      call,
      (model, signal) => {
        lookUpModel(request.model, model);
        return work(model, request, signal);
      },
      ahead && (() => ahead(request)),
    );
  }

  /** Aborts the call with this id, where it is still running. */
  cancel(callId: string): void {
    this.#calls.get(callId)?.abort(new DOMException('The request was aborted.', 'AbortError'));
  }

  /** `GET /v1/models`: `jev`, and the model loaded (or loading) where there is one. */
  models(loaded: string | null): ModelList {
    const model = (id: string) => ({ id, object: 'model' as const, created: CREATED, owned_by: this.#o.ownedBy });
    return { object: 'list', data: loaded ? [model('jev'), model(loaded)] : [model('jev')] };
  }

  async #serve<T>(call: CallHandle, work: (model: M, signal: AbortSignal) => Promise<T>, ahead?: () => Promise<void> | null): Promise<T> {
    const controller = new AbortController();
    this.#calls.set(call.id, controller);
    try {
      // Nothing to do ahead (null): the request takes its turn in the queue at once, in the order it came.
      const pending = ahead?.() ?? null;
      if (pending) await untilAborted(pending, controller.signal);
      return await this.#o.serve(controller.signal, (model) => work(model, controller.signal));
    } finally {
      this.#calls.delete(call.id);
    }
  }
}

/** A request's `model`: `jev` (whichever is loaded) or the loaded model's own id; anything else is `model_not_found`. */
export function lookUpModel(requested: string, model: Pick<FrontModel, 'id'>): void {
  if (requested === 'jev' || requested === model.id) return;
  throw new JevError('model_not_found', `The model ${JSON.stringify(requested)} does not exist here; use "jev" or "${model.id}".`, { param: 'model' });
}

/** `work`, or `signal`'s reason as soon as it aborts (the work goes on, its outcome unobserved). */
function untilAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
