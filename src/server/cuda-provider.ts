import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { JevError } from '../contract/index.ts';

/**
 * `--device cuda`: the in-process engine on onnxruntime-node's CUDA execution provider.
 *
 * onnxruntime-node's npm package carries `libonnxruntime.so.1`, which can run the CUDA provider,
 * but not the provider itself: `libonnxruntime_providers_cuda.so` and
 * `libonnxruntime_providers_shared.so`, of the same onnxruntime version, must be beside it
 * (onnxruntime loads providers from its own folder). Its postinstall downloads a CUDA 12 build
 * from nuget.org where asked (`--onnxruntime-node-install=cuda12`); the `onnxruntime-gpu` wheel of
 * the same version on PyPI holds a CUDA 13 build of both files (docs/server.md, "--device cuda").
 * The CUDA libraries they link (cudart, cuBLAS, cuRAND; cuDNN where a graph has convolutions) come
 * from the machine, on the loader's path.
 *
 * This is checked before any thread starts: no provider beside onnxruntime-node is refused here,
 * naming the folder and how to fill it. A provider whose CUDA libraries cannot be loaded fails at
 * the model's load, with onnxruntime's message (the library it could not open).
 */
export const CUDA_PROVIDER_FILES: Readonly<Record<string, readonly string[]>> = {
  'linux/x64': ['libonnxruntime_providers_cuda.so', 'libonnxruntime_providers_shared.so'],
};

/** The folder of onnxruntime-node's native binding for this platform, as the engine's thread resolves the package (from `entry`). */
export function ortNodeBinFolder(entry: URL, platform: string = process.platform, arch: string = process.arch): string {
  const main = createRequire(entry).resolve('onnxruntime-node');
  // main is {package}/dist/index.js; the binding is {package}/bin/napi-v6/{platform}/{arch}/.
  return join(dirname(dirname(main)), 'bin', 'napi-v6', platform, arch);
}

/** Refuses `--device cuda` where onnxruntime-node cannot load its CUDA provider; returns the folder that holds it. */
export function requireCudaProvider(entry: URL, platform: string = process.platform, arch: string = process.arch): string {
  const files = CUDA_PROVIDER_FILES[`${platform}/${arch}`];
  if (!files) {
    throw cudaUnavailable(`onnxruntime-node offers its CUDA provider on Linux x64 only, and this is ${platform}/${arch}`, { platform, arch });
  }
  const folder = ortNodeBinFolder(entry, platform, arch);
  const missing = files.filter((f) => !existsSync(join(folder, f)));
  if (missing.length > 0) {
    throw cudaUnavailable(
      `onnxruntime-node's CUDA provider is not installed: ${missing.join(' and ')} missing from ${folder}. ` +
        'Install it with `npm rebuild onnxruntime-node --onnxruntime-node-install=cuda12` (CUDA 12, from nuget.org), ' +
        'or copy both files from the onnxruntime-gpu wheel of the same version (CUDA 13) into that folder (docs/server.md, "--device cuda")',
      { folder, missing },
    );
  }
  return folder;
}

function cudaUnavailable(why: string, details: Record<string, unknown>): JevError {
  return new JevError('model_load_failed', `--device cuda is not available: ${why}. Use --device cpu.`, {
    param: 'device',
    details: { reason: 'device_unavailable', device: 'cuda', ...details },
  });
}
