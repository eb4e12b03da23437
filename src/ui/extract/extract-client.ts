import type { ExtractionRequestInput } from '../../contract/extraction-request.ts';
import type { ExtractionResponse } from '../../contract/extraction-response.ts';
import type { JevClient } from '../../facade/jev-client.ts';

export type ExtractCall = (request: ExtractionRequestInput, options: { signal?: AbortSignal }) => Promise<ExtractionResponse>;

/**
 * The client's `extractions.create` (facade), read without assuming this build's client has it:
 * null where it does not, and the tab says so instead of failing at the first call.
 */
export function extractionsOf(client: JevClient): ExtractCall | null {
  const extractions = (client as unknown as { extractions?: { create?: unknown } }).extractions;
  if (!extractions || typeof extractions.create !== 'function') return null;
  const create = extractions.create as ExtractCall;
  return (request, options) => create.call(extractions, request, options);
}
