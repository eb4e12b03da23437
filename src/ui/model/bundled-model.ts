import type { RegistryModel } from './model-registry.ts';

/**
 * The model the app serves from its own origin (build/bundled-models.ts serves vendor/models
 * under `bundled/`): TinyStories-656K, 3.7 MB, no download from elsewhere, so the page answers on
 * a machine that cannot reach the hub. It writes short children's stories and follows no
 * instructions: a model to see the page work, not to rely on.
 */
export const BUNDLED_MODEL: RegistryModel = {
  id: 'TinyStories-656K',
  label: 'TinyStories 656K',
  parameters: '656K',
  files: { fp32: 3_683_060 },
  webgpu: 'optional',
  note: 'Bundled with the app: loads from this site, no download from elsewhere. Writes short stories; follows no instructions.',
};

/** The model panel's value for the bundled model (its id alone may name a copy on another host). */
export const BUNDLED_CHOICE = `bundled:${BUNDLED_MODEL.id}`;

/** The `host` parameter that names the app's own copy, relative to the page: `?model=TinyStories-656K&host=bundled`. */
export const BUNDLED_HOST_PARAM = 'bundled';

/** The bundled models' host on this page's origin (`{page folder}/bundled`). */
export function bundledHost(pageHref: string): string {
  return new URL(BUNDLED_HOST_PARAM, pageHref).href.replace(/\/+$/, '');
}

/** Whether a load target is the bundled model served by this app. */
export function isBundled(target: { model: string; host: string }, pageHref: string): boolean {
  return target.model === BUNDLED_MODEL.id && target.host === bundledHost(pageHref);
}
