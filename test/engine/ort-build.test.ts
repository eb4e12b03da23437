/**
 * The onnxruntime-web build the engine runs (src/engine/runtime/ort-build.ts): JSPI where WebAssembly has
 * `Suspending`, asyncify elsewhere; every file of both ships with the installed onnxruntime-web;
 * a service worker skips only the other build's files.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOtherBuildFile, ORT_BUILDS, ORT_FILE_NAMES, ortBuild } from '../../src/engine/runtime/ort-build.ts';

describe('ortBuild', () => {
  it('is jspi where WebAssembly.Suspending is a constructor, asyncify otherwise', () => {
    expect(ortBuild({ Suspending: function Suspending() {} })).toBe('jspi');
    expect(ortBuild({})).toBe('asyncify');
    expect(ortBuild({ Suspending: true })).toBe('asyncify');
    // This Node's own answer follows its WebAssembly.
    expect(ortBuild()).toBe(typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function' ? 'jspi' : 'asyncify');
  });

  it('names files the installed onnxruntime-web ships, two per build', () => {
    const dist = dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
    expect(ORT_FILE_NAMES).toHaveLength(4);
    for (const name of ORT_FILE_NAMES) expect(existsSync(join(dist, name)), name).toBe(true);
  });

  it('a service worker skips the other build, and nothing else', () => {
    const jspi = ORT_BUILDS.jspi;
    const asyncify = ORT_BUILDS.asyncify;
    expect(isOtherBuildFile(`/app/ort/${asyncify.wasm}`, 'jspi')).toBe(true);
    expect(isOtherBuildFile(`ort/${asyncify.mjs}?__WB_REVISION__=1`, 'jspi')).toBe(true);
    expect(isOtherBuildFile(`/app/ort/${jspi.wasm}`, 'jspi')).toBe(false);
    expect(isOtherBuildFile(`/app/ort/${jspi.mjs}`, 'asyncify')).toBe(true);
    expect(isOtherBuildFile(`/app/ort/${asyncify.mjs}`, 'asyncify')).toBe(false);
    for (const other of ['index.html', 'assets/engine.worker-abc.js', 'ort/ort-wasm-simd-threaded.wasm', 'icon.svg']) {
      expect(isOtherBuildFile(other, 'jspi'), other).toBe(false);
      expect(isOtherBuildFile(other, 'asyncify'), other).toBe(false);
    }
  });
});
