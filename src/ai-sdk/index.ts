// The AI SDK provider entry (`jev-local/ai-sdk`): wiring of its public API only.
export { jevLocal, type JevLocalProvider, type JevLocalSettings } from './jev-local.ts';
export type { JevLocalClient } from './jev-local-client.ts';
export { JevDecisionModel } from './decision-model.ts';
export { JevLanguageModel } from './language-model.ts';
