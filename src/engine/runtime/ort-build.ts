/**
 * onnxruntime-web's wasm builds the engine ships, and the one this browser runs.
 *
 * Both run the wasm and WebGPU backends; they differ in how C++ waits on JavaScript's promises
 * (a WebGPU buffer read, an asynchronous kernel). The asyncify build rewrites the module so that
 * it can unwind and rewind its own stack; that runs everywhere, but costs every call into it and
 * makes the module larger (26.9 MB against 16.8 MB). The JSPI build suspends on a promise with
 * WebAssembly's JavaScript Promise Integration (`WebAssembly.Suspending`, in Chromium since 137),
 * where the browser has it. Measured on TinyStories-656K, whose decode steps are mostly that fixed
 * cost per call (docs/threads.md): decode 1.8–2.5× the asyncify build's, the renderer about
 * 100 MiB smaller.
 */
export const ORT_BUILDS = {
  jspi: { mjs: 'ort-wasm-simd-threaded.jspi.mjs', wasm: 'ort-wasm-simd-threaded.jspi.wasm' },
  asyncify: { mjs: 'ort-wasm-simd-threaded.asyncify.mjs', wasm: 'ort-wasm-simd-threaded.asyncify.wasm' },
} as const;

export type OrtBuild = keyof typeof ORT_BUILDS;

/** Every file of every build: what is shipped under `ort/`. */
export const ORT_FILE_NAMES: readonly string[] = Object.values(ORT_BUILDS).flatMap((b) => [b.mjs, b.wasm]);

/** The build this JavaScript engine runs: JSPI where WebAssembly has it, otherwise asyncify. */
export function ortBuild(wasm: object = WebAssembly): OrtBuild {
  return typeof (wasm as { Suspending?: unknown }).Suspending === 'function' ? 'jspi' : 'asyncify';
}

/** Whether `url` names a file of a build other than `build`: a service worker need not precache it. */
export function isOtherBuildFile(url: string, build: OrtBuild = ortBuild()): boolean {
  const name = url.replace(/[?#].*$/, '').replace(/^.*\//, '');
  return ORT_FILE_NAMES.includes(name) && name !== ORT_BUILDS[build].mjs && name !== ORT_BUILDS[build].wasm;
}
