import type { LanguageModel } from './language-model.ts';

/** The engine's release date, the `<date>` of every model version it reports. */
export const ENGINE_RELEASE = '20261122';

/**
 * The exact model version that serves a request, `<vendor>/jev-<version>-<date>`: the vendor is
 * `local` (the user's own device), the version names the underlying model and its quantization.
 */
export function modelVersion(lm: Pick<LanguageModel, 'id' | 'dtype'>): string {
  return `local/jev-${versionSlug(lm.id)}.${lm.dtype}-${ENGINE_RELEASE}`;
}

/**
 * The version of a model served by a serving engine behind src/server/: the vendor is the engine
 * (`sglang`, `vllm`), and no dtype is named (the engine's own precision, which the server cannot
 * see). A calibration profile fitted in the browser (`local/…`) does not apply to it.
 */
export function servedModelVersion(engine: string, id: string): string {
  return `${engine}/jev-${versionSlug(id)}-${ENGINE_RELEASE}`;
}

function versionSlug(id: string): string {
  return id
    .toLowerCase()
    .replace(/\//g, '--')
    .replace(/[^a-z0-9._-]+/g, '-');
}
