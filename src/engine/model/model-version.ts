import type { LanguageModel } from './language-model.ts';

/** The engine's release date, the `<date>` of every model version it reports. */
export const ENGINE_RELEASE = '20261122';

/**
 * The exact model version that serves a request, `<vendor>/jev-<version>-<date>`: the vendor is
 * `local` (the user's own device), the version names the underlying model and its quantization.
 */
export function modelVersion(lm: Pick<LanguageModel, 'id' | 'dtype'>): string {
  const slug = lm.id
    .toLowerCase()
    .replace(/\//g, '--')
    .replace(/[^a-z0-9._-]+/g, '-');
  return `local/jev-${slug}.${lm.dtype}-${ENGINE_RELEASE}`;
}
