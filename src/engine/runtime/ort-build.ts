/**
 * onnxruntime-web's wasm builds the engine ships, and the one each load runs.
 *
 * - **`cpu`**: onnxruntime-web's wasm-only build (the files of its `ort.wasm` bundle): the wasm
 *   backend alone, no WebGPU, and C++ never waits on a JavaScript promise. 14.3 MB. What a load on
 *   the `wasm` device runs by default (WASM_ORT_BUILD).
 * - **`jspi`** and **`asyncify`**: both run the WebGPU backend as well as wasm; they differ in how
 *   C++ waits on JavaScript's promises (a WebGPU buffer read, an asynchronous kernel). The asyncify
 *   build rewrites the module so that it can unwind and rewind its own stack; that runs everywhere,
 *   but costs every call into it and makes the module larger (26.9 MB against 16.8 MB). The JSPI
 *   build suspends on a promise with WebAssembly's JavaScript Promise Integration
 *   (`WebAssembly.Suspending`, in Chromium since 137), where the browser has it. What a WebGPU load
 *   runs (PREFERRED_ORT_BUILD where JSPI exists, asyncify elsewhere).
 *
 * onnxruntime-web initializes its module once per worker, so a worker runs the build of its first
 * load (runtime-env.ts `pinRuntimeBuild`); a worker on the `cpu` build asked for WebGPU later is
 * replaced by a fresh one (facade/engine-supervisor.ts).
 *
 * **Why `cpu` on wasm** (issue 62, docs/benchmarks.md "Where a load goes"): the same graph and
 * kernels in a module without the WebGPU backend. `npm run bench -- --only load --no-peers --reps 3`,
 * this build against JSPI alternately, Chromium 156.0.8078.114, 2 threads, two pairs each: the
 * renderers' peak of an fp32 load 1,194–1,196 against 1,372–1,378 MiB on fresh visits and
 * 1,876–1,889 against 2,056–2,060 MiB on reloads, q8 reloads 986 against 1,107 MiB, q4 reloads
 * 903 / 997 against 1,063 / 1,077 MiB (less machine code compiled for a smaller module); the first
 * answer of a fresh fp32 visit 2.6–3.1 against 3.6–3.7 s; time to ready level (fp32 1.89 / 2.05
 * against 2.11 / 2.07 s on reloads). Decode, prefill and decisions
 * (`npm run bench -- --quick --dtypes q4,q8,fp32 --no-grid --no-peers --no-tabs --no-structured
 * --no-gqa --no-logits --reps 3`, two runs each, alternated): decode fp32 38.1 / 40.5 against
 * 39.1 / 34.7 tok/s, q4 34.3 / 34.0 against 30.0 / 31.4, q8 35.7 / 36.1 against 33.4 / 34.3;
 * prefill and the 4-question decision within the runs' spread.
 *
 * **Why JSPI on WebGPU, where it exists**: `npm run bench -- --only ort-builds` runs JSPI and
 * asyncify side by side (docs/threads.md). On Chromium 156.0.8078.108 (Debian, 2 cores shared with
 * other work), three runs of 5, 6 and 5 alternating repetitions, JSPI ÷ asyncify, the runs' medians:
 *   - smollm2-135m-random fp32 and q8, 1 and 2 threads (12 rows): decode 0.98–1.40× by the median
 *     step (median 1.07×; 1.05–1.12× in the quietest run), 1.01–1.24× by steps ÷ time (median
 *     1.06×); prefill 0.84–2.82× (median 1.02×): equal within the noise;
 *   - TinyStories-656K fp32: the median decode step faster on JSPI in all six rows (1.09–5.72×;
 *     JSPI 680–1269 tok/s, asyncify 189–952); whole-decode and prefill rates swing both ways with
 *     the machine's load (0.43–2.05×, 0.51–1.39×).
 * JSPI's renderer is ~100 MiB smaller. So JSPI is the WebGPU build where it exists.
 * `ortBuild=cpu|jspi|asyncify` (page parameter), `createClient({ ortBuild })` or
 * `RuntimeConfig.ortBuild` force one, for measuring (`cpu` on a WebGPU load is not possible: that
 * load runs the WebGPU build).
 */
export const ORT_SOURCE_FILES = {
  jspi: { mjs: 'ort-wasm-simd-threaded.jspi.mjs', wasm: 'ort-wasm-simd-threaded.jspi.wasm' },
  asyncify: { mjs: 'ort-wasm-simd-threaded.asyncify.mjs', wasm: 'ort-wasm-simd-threaded.asyncify.wasm' },
  cpu: { mjs: 'ort-wasm-simd-threaded.mjs', wasm: 'ort-wasm-simd-threaded.wasm' },
} as const;

/**
 * The revision of those six files (ORT_SOURCE_FILES, in onnxruntime-web's dist/: jspi's .mjs and
 * .wasm, then asyncify's, then cpu's): the first 8 hex digits of the SHA-256 of their bytes one after the
 * other. Shipped under `ort/` with it in their names, so that one name is one content: the engine
 * then compiles the wasm from the browser's stored copy without asking the host again, and the
 * browser reuses the machine code it compiled from it (runtime-fetch.ts).
 * test/engine/ort-build.test.ts recomputes it from the installed package: bump it with onnxruntime-web.
 */
export const ORT_REVISION = 'd40e2878';

const shipped = (file: string) => file.replace(/\.(mjs|wasm)$/, `.${ORT_REVISION}.$1`);

/** Each build's files as shipped under `ort/` (the names carry ORT_REVISION). */
export const ORT_BUILDS = {
  jspi: { mjs: shipped(ORT_SOURCE_FILES.jspi.mjs), wasm: shipped(ORT_SOURCE_FILES.jspi.wasm) },
  asyncify: { mjs: shipped(ORT_SOURCE_FILES.asyncify.mjs), wasm: shipped(ORT_SOURCE_FILES.asyncify.wasm) },
  cpu: { mjs: shipped(ORT_SOURCE_FILES.cpu.mjs), wasm: shipped(ORT_SOURCE_FILES.cpu.wasm) },
} as const;

export type OrtBuild = keyof typeof ORT_BUILDS;

/** The builds that run WebGPU sessions. */
export type WebGpuOrtBuild = Exclude<OrtBuild, 'cpu'>;

/** The device a build is chosen for: onnxruntime-web's wasm backend, or its WebGPU one. */
export type OrtDevice = 'wasm' | 'webgpu';

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
 * The build a WebGPU load runs where both WebGPU builds run (JSPI present), unless told otherwise:
 * chosen by the measurement quoted at the top of this file (`npm run bench -- --only ort-builds`;
 * docs/threads.md, "The onnxruntime-web build").
 */
export const PREFERRED_ORT_BUILD: WebGpuOrtBuild = 'jspi';

/** The build a wasm load runs unless told otherwise: the wasm-only one (measured at the top of this file). */
export const WASM_ORT_BUILD: OrtBuild = 'cpu';

/** What a caller may ask for: a build, or `auto` (the device's default: WASM_ORT_BUILD on wasm, the WebGPU build on WebGPU). */
export type OrtBuildChoice = OrtBuild | 'auto';

/**
 * Reads a build choice from outside (a page parameter, an option): `cpu`, `jspi`, `asyncify` or
 * `auto`, in any case, surrounding blanks ignored; anything else (an empty or missing value
 * included) is null.
 */
export function parseOrtBuild(value: unknown): OrtBuildChoice | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  return v === 'cpu' || v === 'jspi' || v === 'asyncify' || v === 'auto' ? v : null;
}

/** Whether `build` runs sessions on `device` (every build runs wasm; `cpu` has no WebGPU). */
export function buildRuns(build: OrtBuild, device: OrtDevice): boolean {
  return device === 'wasm' || build !== 'cpu';
}

/**
 * The build to load for `choice` and the load's `device`:
 * - `cpu` where asked on wasm; on WebGPU, which it cannot run, the WebGPU build;
 * - asyncify where asked (it runs everywhere); JSPI where asked and the engine has JSPI (without
 *   it the JSPI build cannot instantiate, so asyncify);
 * - otherwise (`auto`, none) WASM_ORT_BUILD on wasm, and on WebGPU PREFERRED_ORT_BUILD where JSPI
 *   exists, asyncify where it does not.
 */
export function resolveOrtBuild(
  choice: OrtBuildChoice | null | undefined,
  device: OrtDevice,
  wasm: object = WebAssembly,
  preferred: WebGpuOrtBuild = PREFERRED_ORT_BUILD,
): OrtBuild {
  if (choice === 'asyncify') return 'asyncify';
  if (choice === 'jspi') return hasJspi(wasm) ? 'jspi' : 'asyncify';
  if (device === 'wasm') return choice === 'cpu' ? 'cpu' : WASM_ORT_BUILD;
  return webGpuOrtBuild(wasm, preferred);
}

/** The build this JavaScript engine runs WebGPU sessions on by default: PREFERRED_ORT_BUILD where it has JSPI, else asyncify. */
export function webGpuOrtBuild(wasm: object = WebAssembly, preferred: WebGpuOrtBuild = PREFERRED_ORT_BUILD): WebGpuOrtBuild {
  return hasJspi(wasm) ? preferred : 'asyncify';
}

/** The builds a load may run in this JavaScript engine by default (`auto`): WASM_ORT_BUILD on wasm, and the WebGPU build. */
export function defaultOrtBuilds(wasm: object = WebAssembly): OrtBuild[] {
  return [...new Set<OrtBuild>([WASM_ORT_BUILD, webGpuOrtBuild(wasm)])];
}

/** The build whose `.mjs` a wasmPaths value (or URL) names; null for none of them. */
export function ortBuildOfPath(path: unknown): OrtBuild | null {
  const url = typeof path === 'string' ? path : typeof path === 'object' && path ? (path as { mjs?: unknown }).mjs : undefined;
  if (typeof url !== 'string') return null;
  const name = ortFileName(url);
  for (const [build, files] of Object.entries(ORT_BUILDS)) if (name === files.mjs || name === files.wasm) return build as OrtBuild;
  return null;
}

/** Whether `url` names a file of a build not among `builds` (by default those this engine may run): a service worker need not precache it. */
export function isOtherBuildFile(url: string, builds: readonly OrtBuild[] = defaultOrtBuilds()): boolean {
  const name = ortFileName(url);
  return ORT_FILE_NAMES.includes(name) && !builds.some((b) => name === ORT_BUILDS[b].mjs || name === ORT_BUILDS[b].wasm);
}
