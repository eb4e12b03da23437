// The library entry.
export { createClient, type ClientOptions } from './facade/create-client.ts';
export type { JevClient, CallOptions } from './facade/jev-client.ts';
export type { EngineStatus, LoadEvent, LoadOptions, DeviceChoice, DtypeChoice } from './protocol/engine-api.ts';
export * from './contract/index.ts';
