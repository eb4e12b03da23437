/**
 * `jev-local serve --device cuda` (src/server/cuda-provider.ts): what can be shown without a GPU.
 * The run on one is bench/gpu/cuda.ts (docs/server.md, "--device cuda").
 * - the provider check, on a package laid out as onnxruntime-node's (a folder of its own):
 *   refused off Linux x64, refused naming each missing file and the folder, passed with both;
 * - the sessions asked of onnxruntime-node: the CUDA provider first, the CPU's behind it;
 * - the CPU-kernel rewrites (int8 activations, 8-bit head) are not installed for CUDA;
 * - a provider library whose CUDA libraries cannot be opened fails the load as `device_unavailable`
 *   on `param: "device"`, in onnxruntime-node's own words.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { JevError } from '../../src/contract/index.ts';
import { classifyLoadError } from '../../src/engine/load/load-failure.ts';
import { applyRuntimeConfig, nodeProvider, nodeSessionOptions } from '../../src/engine/load/runtime-env.ts';
import { CUDA_PROVIDER_FILES, ortNodeBinFolder, requireCudaProvider } from '../../src/server/cuda-provider.ts';
import { installNodeRewrites } from '../../src/server/node-session-rewrites.ts';

const root = mkdtempSync(join(tmpdir(), 'jev-cuda-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A folder with a fake onnxruntime-node install beside an entry file, as the engine thread resolves it. */
function install(files: readonly string[]): URL {
  const dir = mkdtempSync(join(root, 'pkg-'));
  const pkg = join(dir, 'node_modules', 'onnxruntime-node');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({ name: 'onnxruntime-node', main: 'dist/index.js' }));
  writeFileSync(join(pkg, 'dist', 'index.js'), '');
  const bin = join(pkg, 'bin', 'napi-v6', 'linux', 'x64');
  mkdirSync(bin, { recursive: true });
  for (const f of files) writeFileSync(join(bin, f), '');
  writeFileSync(join(dir, 'engine-thread.js'), '');
  return pathToFileURL(join(dir, 'engine-thread.js'));
}

function refusal(fn: () => unknown): JevError {
  try {
    fn();
  } catch (e) {
    if (JevError.is(e)) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('--device cuda', () => {
  const files = CUDA_PROVIDER_FILES['linux/x64']!;

  it('finds the provider beside onnxruntime-node, and refuses naming each missing file and the folder', () => {
    const entry = install([files[0]!]);
    const folder = ortNodeBinFolder(entry, 'linux', 'x64');
    expect(folder).toMatch(/node_modules[/\\]onnxruntime-node[/\\]bin[/\\]napi-v6[/\\]linux[/\\]x64$/);
    const e = refusal(() => requireCudaProvider(entry, 'linux', 'x64'));
    expect(e.code).toBe('model_load_failed');
    expect(e.param).toBe('device');
    expect(e.details).toMatchObject({ reason: 'device_unavailable', device: 'cuda', folder, missing: [files[1]] });
    expect(e.message).toContain(folder);
    expect(e.message).toContain(files[1]!);
    expect(e.message).not.toContain(`${files[0]} and`);

    expect(requireCudaProvider(install(files), 'linux', 'x64')).toMatch(/linux[/\\]x64$/);
  });

  it('refuses off Linux x64, where onnxruntime-node has no CUDA provider', () => {
    const e = refusal(() => requireCudaProvider(install(files), 'darwin', 'arm64'));
    expect(e.param).toBe('device');
    expect(e.message).toMatch(/Linux x64 only, and this is darwin\/arm64/);
  });

  it('asks onnxruntime-node for the CUDA provider first, the CPU behind it, with the threads asked', () => {
    applyRuntimeConfig({ nodeProvider: 'cuda', threads: 3 }, undefined);
    expect(nodeProvider()).toBe('cuda');
    expect(nodeSessionOptions()).toEqual({ intraOpNumThreads: 3, executionProviders: ['cuda', 'cpu'] });
    applyRuntimeConfig({}, undefined);
    expect(nodeProvider()).toBe('cpu');
    // onnxruntime-node's default threads; its pool does not spin between operators (runtime-env.ts).
    expect(nodeSessionOptions()).toEqual({ extra: { session: { intra_op: { allow_spinning: '0' } } } });
  });

  it('installs the CPU kernels\' rewrites for the CPU only', async () => {
    const calls: unknown[] = [];
    const original = async (model: unknown) => calls.push(model);
    const cuda = { create: original };
    expect(installNodeRewrites(cuda, 'cuda')).toBeNull();
    expect(cuda.create).toBe(original);
    const cpu = { create: original };
    expect(installNodeRewrites(cpu, 'cpu')).toEqual({ models: 0, logitsToKeep: 0, stepOutputs: 0, nodes: 0, heads: 0 });
    expect(cpu.create).not.toBe(original);
  });

  it('fails a load whose provider cannot open its CUDA libraries as device_unavailable, in onnxruntime\'s words', async () => {
    const cause = new Error('OrtSessionOptionsAppendExecutionProvider_Cuda: Failed to load shared library');
    const e = await classifyLoadError(cause, { model: 'm', base: 'file:///models/m/', dtype: 'fp32', device: 'cuda' });
    expect(e.param).toBe('device');
    expect(e.details).toMatchObject({ reason: 'device_unavailable', device: 'cuda', dtype: 'fp32' });
    expect(e.message).toContain('(fp32 on cuda)');
    expect(e.message).toContain(cause.message);
    expect(e.message).toMatch(/LD_LIBRARY_PATH/);
  });
});
