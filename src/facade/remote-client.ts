import { EventSourceParserStream } from 'eventsource-parser/stream';
import { checkBodyBounds, JevError, type ChatCompletion, type ChatCompletionChunk, type DecisionResponse, type ExtractionResponse, type ModelList } from '../contract/index.ts';
import { idleStatus, type EngineStatus } from '../protocol/engine-api.ts';
import type { CallOptions, JevClient } from './jev-client.ts';
import { ProfileStore } from './profile-store.ts';
import { checkDecisionPolicy, openAIDecisions } from './openai-decisions.ts';

export interface RemoteClientOptions {
  /** The server's `{base_url}`: decisions at `{baseURL}/inference/jev/api/alpha/decisions`, chat at `{baseURL}/v1/…`. */
  baseURL: string;
  apiKey?: string | undefined;
  /** The fetch to use (defaults to the global one). */
  fetch?: typeof fetch | undefined;
  /** As `createClient`'s: OpenAI-shape refusals are decided here, from the server's Jev answers. */
  refuseBelowLabelMass?: number | undefined;
}

/**
 * The same client, served by a remote server that speaks the same HTTP specification: a user
 * who outgrows the device moves to a server without changing code.
 */
export function createRemoteClient(options: RemoteClientOptions): JevClient {
  const base = options.baseURL.replace(/\/+$/, '');
  // The server knows no profile ids of this page: decisions.create sends saved profiles inline.
  const profiles = new ProfileStore();
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const withAuth = (headers: HeadersInit | undefined): Headers => {
    const h = new Headers(headers);
    if (options.apiKey && !h.has('authorization')) h.set('Authorization', `Bearer ${options.apiKey}`);
    return h;
  };
  const remoteFetch = ((input: RequestInfo | URL, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input);
    const target = /^https?:/.test(url) ? url : `${base}${url.startsWith('/') ? '' : '/'}${url}`;
    return doFetch(target, { ...init, headers: withAuth(init?.headers ?? (input instanceof Request ? input.headers : undefined)) });
  }) as typeof fetch;

  async function send(path: string, body: unknown, options?: CallOptions): Promise<Response> {
    // Bounded before JSON.stringify walks it recursively: the same 400 as a local engine gives.
    if (body !== undefined) checkBodyBounds(body);
    const res = await remoteFetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(options?.signal ? { signal: options.signal } : {}),
    });
    if (!res.ok) {
      const payload = await res.json().catch(() => null);
      throw JevError.fromBody(payload, res.status);
    }
    return res;
  }

  async function* chunksOf(res: Response): AsyncGenerator<ChatCompletionChunk> {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done || value.data === '[DONE]') return;
        const data = JSON.parse(value.data);
        if (data && typeof data === 'object' && 'error' in data) throw JevError.fromBody(data, 500);
        yield data as ChatCompletionChunk;
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  }

  // A server's model and cache are its own: nothing of them is visible from here.
  const status = async (): Promise<EngineStatus> => ({ ...idleStatus(), state: 'ready' });

  const decide = async (request: unknown, opts?: CallOptions) =>
    (await send('/inference/jev/api/alpha/decisions', profiles.resolve(request), opts)).json() as Promise<DecisionResponse>;
  const listModels = async () => (await send('/v1/models', undefined)).json() as Promise<ModelList>;
  const policy = checkDecisionPolicy({ refuseBelowLabelMass: options.refuseBelowLabelMass });

  return {
    decisions: {
      create: decide,
      // Served by the server's Jev path, as this client's Jev calls are: the same answers, one shape apart.
      createOpenAI: openAIDecisions({ create: decide, profile: (id) => profiles.get(id), modelIds: async () => (await listModels()).data.map((m) => m.id), policy }),
      policy,
    },
    extractions: {
      create: async (request: unknown, opts?: CallOptions) => (await send('/v1/extractions', request, opts)).json() as Promise<ExtractionResponse>,
    },
    chat: {
      completions: {
        create: (async (request: unknown, opts?: CallOptions) => {
          const res = await send('/v1/chat/completions', request, opts);
          const stream = (request as { stream?: unknown } | null)?.stream === true;
          return stream ? chunksOf(res) : ((await res.json()) as ChatCompletion);
        }) as JevClient['chat']['completions']['create'],
      },
    },
    models: { list: listModels },
    calibration: profiles.view(),
    fetch: remoteFetch,
    ready: status(),
    load: async () => {
      throw new JevError('unprocessable', 'A remote client serves the models of its server; it loads none itself.', { param: null });
    },
    status,
    unload: async () => {
      throw new JevError('unprocessable', "A remote client cannot unload its server's model; it holds none itself.", { param: null });
    },
    cache: {
      clear: async () => {
        throw new JevError('unprocessable', "A remote client cannot clear its server's prefix cache; the server's own page or library can.", { param: null });
      },
    },
    terminate: () => {},
  };
}
