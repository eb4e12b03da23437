// comlink's Node adapter (its own file, outside the package's main entry) ships its types as
// node-adapter.d.ts beside node-adapter.mjs, which TypeScript does not pair with the .mjs name.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  export { default } from 'comlink/dist/esm/node-adapter';
}
