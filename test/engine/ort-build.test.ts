/**
 * The onnxruntime-web build the engine runs (src/engine/runtime/ort-build.ts): the measured preference
 * where WebAssembly has `Suspending`, asyncify elsewhere, or the build a caller forces; every file of
 * both ships with the installed onnxruntime-web;
 * a service worker skips only the other build's files.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasJspi, isOtherBuildFile, ORT_BUILDS, ORT_FILE_NAMES, ORT_FILES, ORT_REVISION, ORT_SOURCE_FILES, ortBuild, ortBuildOfPath, parseOrtBuild, PREFERRED_ORT_BUILD, resolveOrtBuild } from '../../src/engine/runtime/ort-build.ts';

const WITH_JSPI = { Suspending: function Suspending() {} };
const WITHOUT_JSPI = {};

describe('ortBuild', () => {
  it('is the measured preference where WebAssembly.Suspending is a constructor, asyncify otherwise', () => {
    expect(ortBuild(WITH_JSPI)).toBe(PREFERRED_ORT_BUILD);
    expect(ortBuild(WITHOUT_JSPI)).toBe('asyncify');
    expect(ortBuild({ Suspending: true })).toBe('asyncify');
    expect(hasJspi(WITH_JSPI)).toBe(true);
    expect(hasJspi({ Suspending: true })).toBe(false);
    // This Node's own answer follows its WebAssembly.
    expect(ortBuild()).toBe(typeof (WebAssembly as { Suspending?: unknown }).Suspending === 'function' ? PREFERRED_ORT_BUILD : 'asyncify');
  });

  it('the default is JSPI: measured as fast or faster on what the product runs, Chromium 156.0.8078.108 (docs/threads.md)', () => {
    expect(PREFERRED_ORT_BUILD).toBe('jspi');
  });

  it('parses a build choice: jspi, asyncify, auto, in any case; anything else is none', () => {
    expect(parseOrtBuild('jspi')).toBe('jspi');
    expect(parseOrtBuild(' ASYNCIFY ')).toBe('asyncify');
    expect(parseOrtBuild('Auto')).toBe('auto');
    for (const bad of ['', 'plain', 'jspi,asyncify', 'wasm', null, undefined, 1, {}]) expect(parseOrtBuild(bad), String(bad)).toBeNull();
  });

  it('resolves a choice: forced builds where they run, JSPI falls back where the browser lacks it', () => {
    expect(resolveOrtBuild('jspi', WITH_JSPI)).toBe('jspi');
    expect(resolveOrtBuild('asyncify', WITH_JSPI)).toBe('asyncify');
    expect(resolveOrtBuild('jspi', WITHOUT_JSPI)).toBe('asyncify');
    expect(resolveOrtBuild('asyncify', WITHOUT_JSPI)).toBe('asyncify');
    for (const none of ['auto', null, undefined] as const) {
      expect(resolveOrtBuild(none, WITH_JSPI)).toBe(PREFERRED_ORT_BUILD);
      expect(resolveOrtBuild(none, WITH_JSPI, 'jspi')).toBe('jspi');
      expect(resolveOrtBuild(none, WITH_JSPI, 'asyncify')).toBe('asyncify');
      expect(resolveOrtBuild(none, WITHOUT_JSPI, 'jspi')).toBe('asyncify');
    }
  });

  it('names the build of a wasmPaths value or URL', () => {
    expect(ortBuildOfPath({ mjs: `http://x/ort/${ORT_BUILDS.jspi.mjs}`, wasm: 'w' })).toBe('jspi');
    expect(ortBuildOfPath(`/ort/${ORT_BUILDS.asyncify.wasm}?v=2`)).toBe('asyncify');
    expect(ortBuildOfPath('/ort/ort-wasm-simd-threaded.mjs')).toBeNull();
    // onnxruntime-web's own name, without the revision, is not a shipped file.
    expect(ortBuildOfPath(`/ort/${ORT_SOURCE_FILES.jspi.mjs}`)).toBeNull();
    expect(ortBuildOfPath(undefined)).toBeNull();
    expect(ortBuildOfPath({})).toBeNull();
  });

  it('ships the files the installed onnxruntime-web has, two per build, under names that carry their revision', () => {
    const dist = dirname(createRequire(import.meta.url).resolve('onnxruntime-web'));
    expect(ORT_FILE_NAMES).toHaveLength(4);
    expect(ORT_FILES.map((f) => f.name)).toEqual(ORT_FILE_NAMES);
    for (const { name, source } of ORT_FILES) {
      expect(existsSync(join(dist, source)), source).toBe(true);
      expect(name).toBe(source.replace(/\.(mjs|wasm)$/, `.${ORT_REVISION}.$1`));
    }
    // The revision is that of the bytes installed (jspi's .mjs and .wasm, then asyncify's): a new
    // onnxruntime-web fails here until ORT_REVISION is bumped, so a name never stands for two contents.
    const hash = createHash('sha256');
    for (const b of ['jspi', 'asyncify'] as const) for (const f of [ORT_SOURCE_FILES[b].mjs, ORT_SOURCE_FILES[b].wasm]) hash.update(readFileSync(join(dist, f)));
    expect(ORT_REVISION).toBe(hash.digest('hex').slice(0, 8));
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
