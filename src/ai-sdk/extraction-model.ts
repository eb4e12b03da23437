/**
 * The AI SDK's extraction model (`Experimental_ExtractionModelV4`) over a client's
 * `extractions.create`: the call's `state`, `fields` and `referenceDate` go to the engine as they
 * are (the request shape mirrors the AI SDK's call options: docs/extraction.md), and its answers
 * come back as they are (`value`, `guess`, `pNull`, `confidence`, `source`; a list's `items`), so
 * that `experimental_extract`'s own validation checks the engine's types and sources.
 *
 * - A field the engine could not decode answers `{ type: 'refusal' }`; `experimental_extract` then
 *   throws its ExtractionRefusalError naming it.
 * - `reasoning` and `maxOutputTokens` are reported unsupported (values are decoded under their
 *   type's grammar, up to its own bound); `providerOptions.jev` keys likewise.
 * - `providerMetadata.jev`: the request id.
 */
import type {
  Experimental_ExtractionModelV4 as ExtractionModelV4,
  Experimental_ExtractionModelV4Answer as ExtractionAnswer,
  Experimental_ExtractionModelV4CallOptions as ExtractionCallOptions,
  Experimental_ExtractionModelV4Result as ExtractionResult,
  SharedV4Warning,
} from '@ai-sdk/provider';
import { JevError } from '../contract/index.ts';
import { PROVIDER_KEY, type JevLocalClient } from './jev-local-client.ts';

export class JevExtractionModel implements ExtractionModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = `${PROVIDER_KEY}.extraction`;
  readonly supportedFieldTypes = ['text', 'number', 'date', 'time', 'datetime', 'duration', 'list'] as const;

  constructor(
    readonly modelId: string,
    private readonly client: JevLocalClient,
  ) {}

  async doExtract(options: ExtractionCallOptions): Promise<ExtractionResult> {
    const warnings: SharedV4Warning[] = [];
    if (options.reasoning !== undefined && options.reasoning !== 'provider-default' && options.reasoning !== 'none') {
      warnings.push({ type: 'unsupported', feature: 'reasoning', details: 'Each value is decoded at once under its type\'s grammar; the model does not think first.' });
    }
    if (options.maxOutputTokens !== undefined) {
      warnings.push({ type: 'unsupported', feature: 'maxOutputTokens', details: 'Each value is bounded by its type\'s grammar (docs/extraction.md).' });
    }
    for (const key of Object.keys(options.providerOptions?.[PROVIDER_KEY] ?? {})) warnings.push({ type: 'unsupported', feature: `providerOptions.${PROVIDER_KEY}.${key}` });
    const extractions = this.client.extractions;
    if (!extractions) throw new JevError('invalid_request', 'This client has no extractions: use a jev-local client (createClient) that serves POST /v1/extractions.', { param: null });
    const body = {
      model: this.modelId,
      state: options.state,
      fields: options.fields,
      ...(options.referenceDate !== undefined ? { referenceDate: options.referenceDate } : {}),
    };
    const response = await extractions.create(body, { signal: options.abortSignal });
    return {
      answers: response.answers as Record<string, ExtractionAnswer>,
      usage: { inputTokens: response.usage.input_tokens, outputTokens: response.usage.output_tokens },
      warnings,
      providerMetadata: { [PROVIDER_KEY]: { id: response.id } },
      response: { id: response.id, modelId: response.model, body: response },
    };
  }
}
