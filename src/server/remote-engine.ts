import { errorMessages, JevError, toJevError, type ChatCompletion, type ChatCompletionChunk, type DecisionResponse, type ExtractionResponse, type ModelList } from '../contract/index.ts';
import { idleStatus, type CallHandle, type EngineApi, type EngineStatus, type LoadEvent, type LoadOptions, type UnloadReport } from '../protocol/engine-api.ts';
import { decide } from '../engine/decision/decide.ts';
import { PriorCache } from '../engine/decision/prior-cache.ts';
import { servedModelVersion } from '../engine/model/model-version.ts';
import type { TokenizerModel } from '../engine/model/tokenizer-model.ts';
import { RequestFront } from '../engine/request-front.ts';
import type { ServingBackend } from './backend.ts';
import { relayChat } from './chat-relay.ts';
import { remoteScorer } from './remote-scorer.ts';
import { loadServedModel } from './served-model.ts';

/**
 * The text whose tokenization the server and the engine must agree on before anything is served:
 * spaces, punctuation, digits, non-ASCII, and the seams of a decision prompt.
 */
export const TOKENIZER_PROBE = 'State:\nI was charged twice — please refund the duplicate (€12.50, order #4471)!\n\nQuestion: Is it true? Answer with true or false.\n日本語 café 0 1 10';

export interface RemoteEngineOptions {
  backend: ServingBackend;
  /** The model's name on the engine (`--backend-model`). */
  backendModel: string;
  /** Loads the tokenizer model (default: from the hub layout, served-model.ts). */
  loadModel?: (model: string, host: string) => Promise<TokenizerModel>;
}

/**
 * The engine interface (protocol/engine-api.ts) answered by a serving engine: the facade's client,
 * its admission, profiles and HTTP surface stand in front of it unchanged (createLocalClient). A
 * load reads the model's tokenizer, chat template and config, and refuses a backend whose
 * tokenizer disagrees (model_load_failed, both tokenizations in the message). Decisions are
 * planned and scored by the browser's decision code over the engine's log-probabilities
 * (remote-scorer.ts); chat is relayed (chat-relay.ts). Stateless: the only memory is the label
 * priors of contextual calibration, which depend on nothing but the model and the question.
 */
export class RemoteEngine implements EngineApi {
  readonly #backend: ServingBackend;
  readonly #backendModel: string;
  readonly #loadModel: (model: string, host: string) => Promise<TokenizerModel>;
  readonly #priors = new PriorCache();
  #model: TokenizerModel | null = null;
  #loading: Promise<TokenizerModel> | null = null;
  #status: EngineStatus = idleStatus();
  /** Validation, the model's name, the model list and cancellation by call id: the browser engine's own (engine/request-front.ts). */
  readonly #front: RequestFront<TokenizerModel>;

  constructor(options: RemoteEngineOptions) {
    this.#backend = options.backend;
    this.#backendModel = options.backendModel;
    this.#loadModel = options.loadModel ?? loadServedModel;
    this.#front = new RequestFront<TokenizerModel>({ ownedBy: this.#backend.kind, serve: (_signal, work) => this.#serve(work) });
  }

  get backend(): ServingBackend {
    return this.#backend;
  }

  async load(options: LoadOptions, onEvent: (event: LoadEvent) => void = () => {}): Promise<EngineStatus> {
    this.#status = { ...this.#status, state: 'loading', model: options.model, error: null };
    const loading = this.#load(options);
    this.#loading = loading;
    try {
      const model = await loading;
      this.#model = model;
      this.#status = {
        ...this.#status,
        state: 'ready',
        model: model.id,
        version: servedModelVersion(this.#backend.kind, model.id),
        contextLength: model.contextLength,
        error: null,
      };
      onEvent({ type: 'ready', status: this.#status });
      return this.#status;
    } catch (e) {
      const err = toJevError(e);
      this.#status = { ...this.#status, state: 'failed', error: err.message };
      throw err;
    } finally {
      if (this.#loading === loading) this.#loading = null;
    }
  }

  async #load(options: LoadOptions): Promise<TokenizerModel> {
    const model = await this.#loadModel(options.model, options.host);
    const ours = model.encode(TOKENIZER_PROBE, false);
    const theirs = await this.#backend.tokenize(TOKENIZER_PROBE, undefined);
    if (ours.length !== theirs.ids.length || ours.some((id, i) => id !== theirs.ids[i])) {
      throw new JevError('model_load_failed', errorMessages.tokenizerMismatch(this.#backend.kind, TOKENIZER_PROBE, ours, theirs.ids), {
        param: 'model',
        details: { reason: 'tokenizer_mismatch', ours, theirs: theirs.ids },
      });
    }
    // The engine's own bound, where it is tighter than the config's (vLLM's --max-model-len, SGLang's --context-length).
    const contextLength = Math.min(model.contextLength, theirs.maxModelLen ?? Infinity);
    return contextLength === model.contextLength ? model : { ...model, contextLength, encode: model.encode };
  }

  async status(): Promise<EngineStatus> {
    return { ...this.#status };
  }

  async decide(body: unknown, call: CallHandle): Promise<DecisionResponse> {
    return this.#front.decide(body, call, (model, request, signal) => {
      const scorer = remoteScorer(model, this.#backend, servedModelVersion(this.#backend.kind, model.id));
      return decide(scorer, request, { signal, priors: this.#priors });
    });
  }

  /**
   * Extractions are validated (a bad body is still the 4xx that names its field), then refused
   * with 501: an exact `pNull` and `confidence` need the whole next-token distribution at every
   * step of a value decoded under its field's token mask, which a serving engine's HTTP API does
   * not give (its top log-probabilities only, and no per-request token mask).
   */
  async extract(body: unknown, call: CallHandle): Promise<ExtractionResponse> {
    return this.#front.extract(body, call, async () => {
      const kind = this.#backend.kind;
      throw new JevError(
        'not_implemented',
        `The ${kind} backend cannot serve extractions exactly: each field's value is decoded under a token mask for its type, and its pNull and confidence read the whole next-token distribution at every step; ${kind}'s HTTP API returns only the top log-probabilities and takes no per-request token mask. Serve extractions with the in-process engine (jev-local serve without --backend).`,
        { param: null, details: { backend: kind, missing: ['full next-token distribution per step', 'per-request token mask'] } },
      );
    });
  }

  async chat(body: unknown, call: CallHandle, onChunk?: (chunk: ChatCompletionChunk) => void | Promise<void>): Promise<ChatCompletion> {
    return this.#front.chat(body, call, (model, request, signal) =>
      relayChat(this.#backend, request, body as Record<string, unknown>, {
        backendModel: this.#backendModel,
        version: servedModelVersion(this.#backend.kind, model.id),
        signal,
        onChunk,
      }),
    );
  }

  async cancel(callId: string): Promise<void> {
    this.#front.cancel(callId);
  }

  async models(): Promise<ModelList> {
    return this.#front.models(this.#status.model);
  }

  async debug(): Promise<boolean> {
    return false; // no worker to crash, no device to lose: the serving engine is not ours to drill
  }

  async clearCache(): Promise<void> {
    throw new JevError('unprocessable', "The serving engine's prefix cache is its own (SGLang: POST /flush_cache; vLLM: POST /reset_prefix_cache); this server holds none.", { param: null });
  }

  async unload(): Promise<UnloadReport> {
    throw new JevError('unprocessable', "The serving engine's memory is its own; this server holds only a tokenizer, and unloads nothing.", { param: null });
  }

  /** Runs one request once the model is loaded, concurrently with others (cancelled by the front, request-front.ts). */
  async #serve<T>(work: (model: TokenizerModel) => Promise<T>): Promise<T> {
    if (this.#loading) await this.#loading;
    const model = this.#model;
    if (!model) throw new JevError('engine_unavailable', 'No model is loaded: the server did not start.', { param: null });
    return work(model);
  }
}
