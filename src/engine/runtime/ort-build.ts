/**
 * onnxruntime-web's wasm builds the engine ships, and the one this browser runs.
 *
 * Both run the wasm and WebGPU backends; they differ in how C++ waits on JavaScript's promises
 * (a WebGPU buffer read, an asynchronous kernel). The asyncify build rewrites the module so that
 * it can unwind and rewind its own stack; that runs everywhere, but costs every call into it and
 * makes the module larger (26.9 MB against 16.8 MB). The JSPI build suspends on a promise with
 * WebAssembly's JavaScript Promise Integration (`WebAssembly.Suspending`, in Chromium since 137),
 * where the browser has it.
 *
 * The default is a measured choice (PREFERRED_ORT_BUILD), not a feature test alone:
 * `npm run bench -- --only ort-builds` runs both builds side by side (docs/threads.md). On Chromium
 * 156.0.8078.108 (Debian, 2 cores shared with other work), three runs of 5, 6 and 5 alternating
 * repetitions, JSPI ÷ asyncify, the runs' medians:
 *   - smollm2-135m-random fp32 and q8, 1 and 2 threads (12 rows): decode 0.98–1.40× by the median
 *     step (median 1.07×; 1.05–1.12× in the quietest run), 1.01–1.24× by steps ÷ time (median
 *     1.06×); prefill 0.84–2.82× (median 1.02×): equal within the noise;
 *   - TinyStories-656K fp32: the median decode step faster on JSPI in all six rows (1.09–5.72×;
 *     JSPI 680–1269 tok/s, asyncify 189–952); whole-decode and prefill rates swing both ways with
 *     the machine's load (0.43–2.05×, 0.51–1.39×).
 * What the product mostly runs (135M-class models on wasm) is as fast or slightly faster on JSPI;
 * only q8 prefill at 1 thread was ahead on asyncify in two runs of three (0.94×, 0.99×; 1.02× in the
 * third), no decode was; JSPI's renderer is ~100 MiB smaller. So JSPI stays the default where it exists.
 * `ortBuild=jspi|asyncify` (page parameter), `createClient({ ortBuild })` or `RuntimeConfig.ortBuild`
 * force one, for measuring.
 */
export const ORT_SOURCE_FILES = {
  jspi: { mjs: 'ort-wasm-simd-threaded.jspi.mjs', wasm: 'ort-wasm-simd-threaded.jspi.wasm' },
  asyncify: { mjs: 'ort-wasm-simd-threaded.asyncify.mjs', wasm: 'ort-wasm-simd-threaded.asyncify.wasm' },
} as const;

/**
 * The revision of those four files (ORT_SOURCE_FILES, in onnxruntime-web's dist/: jspi's .mjs and
 * .wasm, then asyncify's): the first 8 hex digits of the SHA-256 of their bytes one after the
 * other. Shipped under `ort/` with it in their names, so that one name is one content: the engine
 * then compiles the wasm from the browser's stored copy without asking the host again, and the
 * browser reuses the machine code it compiled from it (runtime-fetch.ts).
 * test/engine/ort-build.test.ts recomputes it from the installed package: bump it with onnxruntime-web.
 */
export const ORT_REVISION = '59996c7a';

const shipped = (file: string) => file.replace(/\.(mjs|wasm)$/, `.${ORT_REVISION}.$1`);

/** Each build's files as shipped under `ort/` (the names carry ORT_REVISION). */
export const ORT_BUILDS = {
  jspi: { mjs: shipped(ORT_SOURCE_FILES.jspi.mjs), wasm: shipped(ORT_SOURCE_FILES.jspi.wasm) },
  asyncify: { mjs: shipped(ORT_SOURCE_FILES.asyncify.mjs), wasm: shipped(ORT_SOURCE_FILES.asyncify.wasm) },
} as const;

export type OrtBuild = keyof typeof ORT_BUILDS;

/** onnxruntime-web's `wasmPaths` for `build`'s files shipped under `base` (a folder's URL, with or without its last `/`). */
export function ortWasmPaths(base: string, build: OrtBuild): { mjs: string; wasm: string } {
  const folder = base.endsWith('/') ? base : `${base}/`;
  return { mjs: `${folder}${ORT_BUILDS[build].mjs}`, wasm: `${folder}${ORT_BUILDS[build].wasm}` };
}

/** Every file of every build: what is shipped under `ort/`. */
export const ORT_FILE_NAMES: readonly string[] = Object.values(ORT_BUILDS).flatMap((b) => [b.mjs, b.wasm]);

/** The file name a URL or path ends in, without its query or fragment. */
export function ortFileName(url: string): string {
  return url.replace(/[?#].*$/, '').replace(/^.*\//, '');
}

/** Whether `url` names one of the shipped runtime files (their names carry the revision of their bytes). */
export function isOrtFile(url: string): boolean {
  return ORT_FILE_NAMES.includes(ortFileName(url));
}

/** Every shipped file with the name of the onnxruntime-web file it is a copy of. */
export const ORT_FILES: readonly { name: string; source: string }[] = (Object.keys(ORT_BUILDS) as OrtBuild[]).flatMap((b) => [
  { name: ORT_BUILDS[b].mjs, source: ORT_SOURCE_FILES[b].mjs },
  { name: ORT_BUILDS[b].wasm, source: ORT_SOURCE_FILES[b].wasm },
]);

/** Whether this JavaScript engine has JSPI (`WebAssembly.Suspending`), which the JSPI build needs. */
export function hasJspi(wasm: object = WebAssembly): boolean {
  return typeof (wasm as { Suspending?: unknown }).Suspending === 'function';
}

/**
 * The build the engine runs where both run (JSPI present), unless told otherwise: chosen by the
 * measurement quoted at the top of this file (`npm run bench -- --only ort-builds`; docs/threads.md,
 * "The onnxruntime-web build").
 */
export const PREFERRED_ORT_BUILD: OrtBuild = 'jspi';

/** What a caller may ask for: a build, or `auto` (PREFERRED_ORT_BUILD where it runs, else asyncify). */
export type OrtBuildChoice = OrtBuild | 'auto';

/**
 * Reads a build choice from outside (a page parameter, an option): `jspi`, `asyncify` or `auto`,
 * in any case, surrounding blanks ignored; anything else (an empty or missing value included) is null.
 */
export function parseOrtBuild(value: unknown): OrtBuildChoice | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  return v === 'jspi' || v === 'asyncify' || v === 'auto' ? v : null;
}

/**
 * The build to load for `choice`: asyncify when asked (it runs everywhere); JSPI when asked and
 * the engine has JSPI (without it the JSPI build cannot instantiate, so asyncify); otherwise
 * PREFERRED_ORT_BUILD where JSPI exists, asyncify where it does not.
 */
export function resolveOrtBuild(choice: OrtBuildChoice | null | undefined, wasm: object = WebAssembly, preferred: OrtBuild = PREFERRED_ORT_BUILD): OrtBuild {
  if (!hasJspi(wasm)) return 'asyncify';
  if (choice === 'jspi' || choice === 'asyncify') return choice;
  return preferred;
}

/** The build this JavaScript engine runs by default: resolveOrtBuild('auto'). */
export function ortBuild(wasm: object = WebAssembly): OrtBuild {
  return resolveOrtBuild('auto', wasm);
}

/** The build whose `.mjs` a wasmPaths value (or URL) names; null for none of them. */
export function ortBuildOfPath(path: unknown): OrtBuild | null {
  const url = typeof path === 'string' ? path : typeof path === 'object' && path ? (path as { mjs?: unknown }).mjs : undefined;
  if (typeof url !== 'string') return null;
  const name = ortFileName(url);
  for (const [build, files] of Object.entries(ORT_BUILDS)) if (name === files.mjs || name === files.wasm) return build as OrtBuild;
  return null;
}

/** Whether `url` names a file of a build other than `build`: a service worker need not precache it. */
export function isOtherBuildFile(url: string, build: OrtBuild = ortBuild()): boolean {
  const name = ortFileName(url);
  return ORT_FILE_NAMES.includes(name) && name !== ORT_BUILDS[build].mjs && name !== ORT_BUILDS[build].wasm;
}
