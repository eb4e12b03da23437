/**
 * The AI SDK's language model (`LanguageModelV4`) over a client's `chat.completions.create`:
 * `doGenerate` one completion, `doStream` its chunks as stream parts (chat-stream.ts). The request
 * is built by chat-request.ts; the client validates it, so a bad option is its 400 naming the
 * field, and `abortSignal` is the call's `signal` (the call rejects with an AbortError).
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4GenerateResult, LanguageModelV4StreamResult } from '@ai-sdk/provider';
import type { ChatCompletion } from '../contract/index.ts';
import { chatRequest } from './chat-request.ts';
import { content, finishReason, usage } from './chat-result.ts';
import { chatStream } from './chat-stream.ts';
import { PROVIDER_KEY, type JevLocalClient } from './jev-local-client.ts';

export class JevLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = `${PROVIDER_KEY}.chat`;
  /** No URL is read: file parts are refused (the loaded model reads text only). */
  readonly supportedUrls = {};

  constructor(
    readonly modelId: string,
    private readonly client: JevLocalClient,
  ) {}

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { body, warnings } = chatRequest(options, this.modelId, false);
    const completion = (await this.client.chat.completions.create(body, { signal: options.abortSignal })) as ChatCompletion;
    const choice = completion.choices[0]!;
    return {
      content: content(completion),
      finishReason: finishReason(choice.finish_reason),
      usage: usage(completion.usage, choice.message.reasoning_content !== undefined && choice.message.reasoning_content !== ''),
      warnings,
      request: { body },
      response: { id: completion.id, modelId: completion.model, timestamp: new Date(completion.created * 1000), body: completion },
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { body, warnings } = chatRequest(options, this.modelId, true);
    const chunks = await this.client.chat.completions.create({ ...body, stream: true }, { signal: options.abortSignal });
    return { stream: chatStream(chunks, warnings), request: { body } };
  }
}
