#!/usr/bin/env node
/**
 * A pinned patch of onnxruntime-web (docs/threads.md, "KV cache in wasm memory"): outputs that
 * stay in wasm memory, and inputs already there passed by pointer, so that a KV cache flows from
 * one forward pass to the next without being copied out of wasm memory and back in.
 *
 * onnxruntime-web copies every CPU output out of the wasm heap into a new typed array and frees
 * it, and copies every input into a fresh malloc: on Chromium 156 that is ~60 ms of an ~88 ms
 * decode step of a 135M model (36.5 MiB of KV each way). With the patch:
 *
 * - while `globalThis.__ortResidentOutputs` is true (the engine sets it around its own passes
 *   only: src/engine/runtime/resident-outputs.ts), and the wasm memory is shared (a cross-origin-isolated
 *   page: its buffer survives growth), each CPU output is returned as a typed-array VIEW over the
 *   wasm heap; its OrtValue is kept and released when the tensor is disposed (Tensor.dispose →
 *   the tensor's disposer, the mechanism onnxruntime-web already uses for GPU outputs);
 * - an input whose data is a view over the wasm heap (same buffer) is passed by pointer.
 *
 * Applied by `npm ci` / `npm install` (package.json `prepare`, which runs on `npm ci` and `npm install` in this repository, never in a project that installs the built package: that one bundles the patched code), to the one file the app's
 * bundler takes (`onnxruntime-web/webgpu` → dist/ort.webgpu.bundle.min.mjs). Each replacement is
 * an exact string of the pinned version (1.31.0-dev.20260914-8d85527a0); if one is missing the
 * script fails, naming it, and the install fails: an upgrade must re-check the patch.
 * test/runtime/ort-patch.test.ts fails if the installed file is not patched.
 *
 * To drop it: when onnxruntime-web can keep outputs in wasm memory itself (an output location for
 * the wasm backend, as 'gpu-buffer' is for WebGPU; see docs/threads.md), remove this file, the
 * `postinstall` line, src/engine/runtime/resident-outputs.ts's flag, and use that option instead.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const VERSION = '1.31.0-dev.20260914-8d85527a0';
export const FILE = 'ort.webgpu.bundle.min.mjs';
export const MARKER = '/*jev-ort-patch:resident-outputs*/';

/** [what the pinned file says, what it says patched, how many times]. */
export const REPLACEMENTS = [
  // Outputs: a view over the wasm heap, released on dispose, instead of a copy.
  [
    'let re=it(ne),Q=new re(xe);new Uint8Array(Q.buffer,Q.byteOffset,Q.byteLength).set(l.HEAPU8.subarray(se,se+Q.byteLength)),I.push([ne,Se,Q,"cpu"])',
    `let re=it(ne);if(globalThis.__ortResidentOutputs&&typeof SharedArrayBuffer<"u"&&l.HEAPU8.buffer instanceof SharedArrayBuffer&&se%8===0){${MARKER}ge=!0;let Q=new re(l.HEAPU8.buffer,se,xe);I.push([ne,Se,{data:Q,dispose:()=>{l._OrtReleaseTensor(ae)!==0&&V("Can't release tensor.")}},"wasm-resident"])}else{let Q=new re(xe);new Uint8Array(Q.buffer,Q.byteOffset,Q.byteLength).set(l.HEAPU8.subarray(se,se+Q.byteLength)),I.push([ne,Se,Q,"cpu"])}`,
    1,
  ],
  // …which the session handler turns into a CPU tensor whose dispose releases the OrtValue.
  [
    '$c=a=>{switch(a[3]){case"cpu":return new Le(a[0],a[2],a[1]);',
    '$c=a=>{switch(a[3]){case"cpu":return new Le(a[0],a[2],a[1]);case"wasm-resident":{let t=new Le(a[0],a[2].data,a[1]);return t.disposer=a[2].dispose,t}',
    1,
  ],
  // Inputs already in the wasm heap: passed by pointer, neither copied nor freed.
  [
    'else C=U.byteLength,A=b._malloc(C),s.push(A),b.HEAPU8.set(new Uint8Array(U.buffer,U.byteOffset,C),A)',
    'else C=U.byteLength,U.buffer===b.HEAPU8.buffer?A=U.byteOffset:(A=b._malloc(C),s.push(A),b.HEAPU8.set(new Uint8Array(U.buffer,U.byteOffset,C),A))',
    2,
  ],
];

/** The patched text; throws naming a replacement whose original is not there as often as it should be. */
export function patch(text) {
  if (text.includes(MARKER)) return text;
  let out = text;
  for (const [from, to, times] of REPLACEMENTS) {
    const found = out.split(from).length - 1;
    if (found !== times) throw new Error(`ort-patch: expected ${times} occurrence(s) of ${JSON.stringify(from.slice(0, 80))}… in ${FILE}, found ${found}: onnxruntime-web is not ${VERSION}; re-check the patch (build/ort-patch.mjs)`);
    out = out.split(from).join(to);
  }
  return out;
}

/** The installed onnxruntime-web's dist folder and version. */
export function installed() {
  // Its main entry lives in dist/ (as build/ort-files.ts finds it); package.json is one folder up.
  const dist = dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
  return { dist, version: JSON.parse(readFileSync(join(dist, '..', 'package.json'), 'utf8')).version };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { dist, version } = installed();
  if (version !== VERSION) throw new Error(`ort-patch: onnxruntime-web ${version} is installed, the patch is for ${VERSION}; re-check it (build/ort-patch.mjs)`);
  const file = join(dist, FILE);
  const text = readFileSync(file, 'utf8');
  const patched = patch(text);
  if (patched !== text) writeFileSync(file, patched);
  console.log(`ort-patch: ${file} ${patched === text ? 'already patched' : 'patched'}`);
}
