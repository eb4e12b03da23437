/**
 * The onnxruntime-web build the engine runs (src/engine/runtime/ort-build.ts): on wasm the wasm-only
 * build, on WebGPU the measured preference where WebAssembly has `Suspending` and asyncify elsewhere,
 * or the build a caller forces; every file of the three ships with the installed onnxruntime-web;
 * a service worker skips only the files of builds this browser never runs.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildRuns,
  defaultOrtBuilds,
  hasJspi,
  isOtherBuildFile,
  ORT_BUILDS,
  ORT_FILE_NAMES,
  ORT_FILES,
  ORT_REVISION,
  ORT_SOURCE_FILES,
  ortBuildOfPath,
  parseOrtBuild,
  PREFERRED_ORT_BUILD,
  resolveOrtBuild,
  WASM_ORT_BUILD,
  webGpuOrtBuild,
} from '../../src/engine/runtime/ort-build.ts';

const WITH_JSPI = { Suspending: function Suspending() {} };
const WITHOUT_JSPI = {};

describe('ortBuild', () => {
  it('on WebGPU: the measured preference where WebAssembly.Suspending is a constructor, asyncify otherwise', () => {
    expect(webGpuOrtBuild(WITH_JSPI)).toBe(PREFERRED_ORT_BUILD);
    expect(webGpuOrtBuild(WITHOUT_JSPI)).toBe('asyncify');
    expect(webGpuOrtBuild({ Suspending: true })).toBe('asyncify');
    expect(hasJspi(WITH_JSPI)).toBe(true);
    expect(hasJspi({ Suspending: true })).toBe(false);
    // This Node's own answer follows its WebAssembly.
    expect(webGpuOrtBuild()).toBe(typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function' ? PREFERRED_ORT_BUILD : 'asyncify');
  });

  it('the defaults: the wasm-only build on wasm, JSPI on WebGPU (measured, docs/threads.md and the top of ort-build.ts)', () => {
    expect(WASM_ORT_BUILD).toBe('cpu');
    expect(PREFERRED_ORT_BUILD).toBe('jspi');
    expect(defaultOrtBuilds(WITH_JSPI)).toEqual(['cpu', 'jspi']);
    expect(defaultOrtBuilds(WITHOUT_JSPI)).toEqual(['cpu', 'asyncify']);
  });

  it('parses a build choice: cpu, jspi, asyncify, auto, in any case; anything else is none', () => {
    expect(parseOrtBuild('jspi')).toBe('jspi');
    expect(parseOrtBuild(' ASYNCIFY ')).toBe('asyncify');
    expect(parseOrtBuild('Cpu')).toBe('cpu');
    expect(parseOrtBuild('Auto')).toBe('auto');
    for (const bad of ['', 'plain', 'jspi,asyncify', 'wasm', 'webgpu', null, undefined, 1, {}]) expect(parseOrtBuild(bad), String(bad)).toBeNull();
  });

  it('which build runs which device: every build runs wasm, the wasm-only build no WebGPU', () => {
    for (const b of ['cpu', 'jspi', 'asyncify'] as const) expect(buildRuns(b, 'wasm'), b).toBe(true);
    expect([buildRuns('cpu', 'webgpu'), buildRuns('jspi', 'webgpu'), buildRuns('asyncify', 'webgpu')]).toEqual([false, true, true]);
  });

  it('resolves a choice for a device: forced builds where they run, JSPI falls back where the browser lacks it, cpu on WebGPU is the WebGPU build', () => {
    for (const device of ['wasm', 'webgpu'] as const) {
      expect(resolveOrtBuild('jspi', device, WITH_JSPI)).toBe('jspi');
      expect(resolveOrtBuild('asyncify', device, WITH_JSPI)).toBe('asyncify');
      expect(resolveOrtBuild('jspi', device, WITHOUT_JSPI)).toBe('asyncify');
      expect(resolveOrtBuild('asyncify', device, WITHOUT_JSPI)).toBe('asyncify');
    }
    expect(resolveOrtBuild('cpu', 'wasm', WITH_JSPI)).toBe('cpu');
    expect(resolveOrtBuild('cpu', 'wasm', WITHOUT_JSPI)).toBe('cpu');
    expect(resolveOrtBuild('cpu', 'webgpu', WITH_JSPI)).toBe('jspi');
    expect(resolveOrtBuild('cpu', 'webgpu', WITHOUT_JSPI)).toBe('asyncify');
    for (const none of ['auto', null, undefined] as const) {
      expect(resolveOrtBuild(none, 'wasm', WITH_JSPI)).toBe(WASM_ORT_BUILD);
      expect(resolveOrtBuild(none, 'wasm', WITHOUT_JSPI)).toBe(WASM_ORT_BUILD);
      expect(resolveOrtBuild(none, 'webgpu', WITH_JSPI)).toBe(PREFERRED_ORT_BUILD);
      expect(resolveOrtBuild(none, 'webgpu', WITH_JSPI, 'jspi')).toBe('jspi');
      expect(resolveOrtBuild(none, 'webgpu', WITH_JSPI, 'asyncify')).toBe('asyncify');
      expect(resolveOrtBuild(none, 'webgpu', WITHOUT_JSPI, 'jspi')).toBe('asyncify');
    }
  });

  it('names the build of a wasmPaths value or URL', () => {
    expect(ortBuildOfPath({ mjs: `http://x/ort/${ORT_BUILDS.jspi.mjs}`, wasm: 'w' })).toBe('jspi');
    expect(ortBuildOfPath(`/ort/${ORT_BUILDS.asyncify.wasm}?v=2`)).toBe('asyncify');
    expect(ortBuildOfPath(`/ort/${ORT_BUILDS.cpu.wasm}`)).toBe('cpu');
    expect(ortBuildOfPath('/ort/ort-wasm-simd-threaded.mjs')).toBeNull();
    // onnxruntime-web's own name, without the revision, is not a shipped file.
    expect(ortBuildOfPath(`/ort/${ORT_SOURCE_FILES.jspi.mjs}`)).toBeNull();
    expect(ortBuildOfPath(undefined)).toBeNull();
    expect(ortBuildOfPath({})).toBeNull();
  });

  it('ships the files the installed onnxruntime-web has, two per build, under names that carry their revision', () => {
    const dist = dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
    expect(ORT_FILE_NAMES).toHaveLength(6);
    expect(ORT_FILES.map((f) => f.name)).toEqual(ORT_FILE_NAMES);
    for (const { name, source } of ORT_FILES) {
      expect(existsSync(join(dist, source)), source).toBe(true);
      expect(name).toBe(source.replace(/\.(mjs|wasm)$/, `.${ORT_REVISION}.$1`));
    }
    // The revision is that of the bytes installed (jspi's .mjs and .wasm, then asyncify's, then cpu's): a new
    // onnxruntime-web fails here until ORT_REVISION is bumped, so a name never stands for two contents.
    const hash = createHash('sha256');
    for (const b of ['jspi', 'asyncify', 'cpu'] as const) for (const f of [ORT_SOURCE_FILES[b].mjs, ORT_SOURCE_FILES[b].wasm]) hash.update(readFileSync(join(dist, f)));
    expect(ORT_REVISION).toBe(hash.digest('hex').slice(0, 8));
  });

  it('a service worker skips the builds this browser never runs, and nothing else', () => {
    const { jspi, asyncify, cpu } = ORT_BUILDS;
    // Where JSPI exists: the wasm-only build (wasm loads) and JSPI (WebGPU loads) are kept, asyncify skipped.
    const withJspi = defaultOrtBuilds(WITH_JSPI);
    expect(isOtherBuildFile(`/app/ort/${asyncify.wasm}`, withJspi)).toBe(true);
    expect(isOtherBuildFile(`ort/${asyncify.mjs}?__WB_REVISION__=1`, withJspi)).toBe(true);
    expect(isOtherBuildFile(`/app/ort/${jspi.wasm}`, withJspi)).toBe(false);
    expect(isOtherBuildFile(`/app/ort/${cpu.wasm}`, withJspi)).toBe(false);
    expect(isOtherBuildFile(`/app/ort/${cpu.mjs}`, withJspi)).toBe(false);
    // Without it: asyncify for WebGPU, JSPI skipped.
    const withoutJspi = defaultOrtBuilds(WITHOUT_JSPI);
    expect(isOtherBuildFile(`/app/ort/${jspi.mjs}`, withoutJspi)).toBe(true);
    expect(isOtherBuildFile(`/app/ort/${asyncify.mjs}`, withoutJspi)).toBe(false);
    expect(isOtherBuildFile(`/app/ort/${cpu.wasm}`, withoutJspi)).toBe(false);
    for (const other of ['index.html', 'assets/engine.worker-abc.js', 'ort/ort-wasm-simd-threaded.wasm', 'icon.svg']) {
      expect(isOtherBuildFile(other, withJspi), other).toBe(false);
      expect(isOtherBuildFile(other, withoutJspi), other).toBe(false);
    }
  });
});
