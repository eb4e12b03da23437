/**
 * Where models live, for every test, the benchmark and the e2e mirror: the generated ones
 * (`npm run models`, git-ignored) and the ones shipped in the repository (vendor/models:
 * TinyStories-656K, a real trained model). A fresh clone has both; nothing reads ../shared.
 */
import { resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');
export const GENERATED = resolve(REPO, 'models');
export const VENDORED = resolve(REPO, 'vendor/models');
/** Looked up in this order, first hit wins. */
export const MODEL_ROOTS = [GENERATED, VENDORED] as const;
export const TINYSTORIES = 'TinyStories-656K';
