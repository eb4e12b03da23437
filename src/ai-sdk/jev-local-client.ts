import type { JevClient } from '../facade/jev-client.ts';

/**
 * What the provider needs of a client: its decision and chat methods, and its saved calibration
 * profiles where it has them (a profile named by id may set the refusal floor). `createClient()`
 * in the page (the engine in this browser, no HTTP) and `createClient({ baseURL })` (a server)
 * both are one, and so is anything else with the same methods.
 */
export type JevLocalClient = Pick<JevClient, 'decisions' | 'chat'> & Partial<Pick<JevClient, 'calibration' | 'extractions'>>;

/** The provider name the AI SDK reports (`model.provider`) and the key of its `providerOptions` / `providerMetadata`. */
export const PROVIDER_KEY = 'jev';
