// The library entry: wiring of the public API only.
export { createClient, type ClientOptions } from './client/create-client.ts';
export { createRemoteClient, type RemoteClientOptions } from './facade/remote-client.ts';
export { serveHttp, type ServeHttpOptions } from './client/serve-http.ts';
export type { JevClient, CallOptions, EngineDebug, CalibrationStore } from './facade/jev-client.ts';
export type { RestartEvent } from './facade/engine-supervisor.ts';
export type { EngineStatus, LoadEvent, LoadOptions, DeviceChoice, DtypeChoice, MemoryStatus, UnloadReport } from './protocol/engine-api.ts';
export * from './contract/index.ts';
