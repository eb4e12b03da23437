/**
 * `jevLocal(client)`: an AI SDK provider over a jev-local client. `createClient()` runs the engine
 * in this page and the provider calls it directly (no HTTP, no service worker);
 * `createClient({ baseURL })` calls a server, and so does the provider over it.
 *
 *     import { createClient } from 'jev-local';
 *     import { jevLocal } from 'jev-local/ai-sdk';
 *     const jev = jevLocal(createClient({ model: 'HuggingFaceTB/SmolLM2-135M-Instruct' }));
 *     await experimental_decide({ model: jev.decisionModel('jev'), state, questions });
 *     await generateText({ model: jev('jev'), prompt });   // jev(id) is jev.languageModel(id)
 *
 * `jev.extractionModel('jev')` runs `experimental_extract` (docs/extraction.md). There are no
 * embedding or image models (those methods throw `model_not_found`).
 */
import type { Experimental_DecisionModelV4, Experimental_ExtractionModelV4, LanguageModelV4 } from '@ai-sdk/provider';
import { JevError, labelMassFloorSchema } from '../contract/index.ts';
import { JevDecisionModel } from './decision-model.ts';
import { JevExtractionModel } from './extraction-model.ts';
import type { JevLocalClient } from './jev-local-client.ts';
import { JevLanguageModel } from './language-model.ts';
import { invalidArgument, providerMessages } from './provider-errors.ts';

export interface JevLocalSettings {
  /**
   * Decisions: a question on whose labels the model put less than this share of its next-token
   * probability (before renormalising over them) is answered `{ type: 'refusal' }`
   * (contract/refusal.ts). From 0 to 1; 0 (default) never refuses. A calibration profile the call
   * names (`providerOptions.jev.calibration`) with its own `refuse_below_label_mass` overrides it.
   * Default: the client's own floor (`createClient({ refuseBelowLabelMass })`), else 0.
   */
  refuseBelowLabelMass?: number;
}

export interface JevLocalProvider {
  (modelId: string): LanguageModelV4;
  readonly specificationVersion: 'v4';
  /** Chat (`chat.completions.create`): `'jev'` or the loaded model's id. */
  languageModel(modelId: string): LanguageModelV4;
  /** Decisions (`decisions.create`): `'jev'`. */
  decisionModel(modelId: string): Experimental_DecisionModelV4;
  /** Extractions (`extractions.create`): `'jev'`. */
  extractionModel(modelId: string): Experimental_ExtractionModelV4;
  embeddingModel(modelId: string): never;
  imageModel(modelId: string): never;
}

export function jevLocal(client: JevLocalClient, settings: JevLocalSettings = {}): JevLocalProvider {
  // The provider's own floor, else the client's (`createClient({ refuseBelowLabelMass })`), else never.
  const floor = settings.refuseBelowLabelMass ?? client.decisions.policy?.refuseBelowLabelMass ?? 0;
  if (!labelMassFloorSchema.safeParse(floor).success) throw invalidArgument(providerMessages.refuseBelowLabelMass(floor), 'refuseBelowLabelMass');
  const languageModel = (modelId: string) => new JevLanguageModel(modelId, client);
  const provider = (modelId: string) => languageModel(modelId);
  return Object.assign(provider, {
    specificationVersion: 'v4' as const,
    languageModel,
    decisionModel: (modelId: string) => new JevDecisionModel(modelId, client, { refuseBelowLabelMass: floor }),
    extractionModel: (modelId: string) => new JevExtractionModel(modelId, client),
    embeddingModel: (modelId: string): never => {
      throw new JevError('model_not_found', providerMessages.noSuchModel('embeddingModel', modelId), { param: 'model' });
    },
    imageModel: (modelId: string): never => {
      throw new JevError('model_not_found', providerMessages.noSuchModel('imageModel', modelId), { param: 'model' });
    },
  });
}
