/**
 * Library entry of the test-model generator: `generateModels()` writes every (or some) spec into
 * `<repo>/models/` (or another directory), skipping models whose stamp is current.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_SPECS, type ModelSpec, findSpec } from './specs.ts';
import { type WriteResult, writeModel } from './write-model.ts';

/** `<repo>/models`, where `npm run models` writes (gitignored). */
export const DEFAULT_MODELS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../models');

export interface GenerateOptions {
  /** Output directory; default DEFAULT_MODELS_DIR. */
  readonly outDir?: string;
  /** Spec names or aliases ('tiny', 'smol', 'tiny-random-llama', ...); default all. */
  readonly only?: string | readonly string[];
  /** Regenerate even if the stamp says the model is up to date. */
  readonly force?: boolean;
  /** Progress messages; default silent. */
  readonly log?: (message: string) => void;
}

/** Generates the selected models (sequentially) and reports what was written or skipped. */
export async function generateModels(opts: GenerateOptions = {}): Promise<WriteResult[]> {
  const outDir = resolve(opts.outDir ?? DEFAULT_MODELS_DIR);
  const only = opts.only === undefined ? undefined : typeof opts.only === 'string' ? [opts.only] : opts.only;
  const specs: ModelSpec[] = only ? [...new Set(only.map(findSpec))] : [...MODEL_SPECS];
  const results: WriteResult[] = [];
  for (const spec of specs) {
    const result = writeModel(spec, outDir, { force: opts.force ?? false, ...(opts.log ? { log: opts.log } : {}) });
    opts.log?.(
      result.skipped
        ? `${spec.name}: up to date (${result.dir})`
        : `${spec.name}: written in ${result.seconds.toFixed(2)} s (${result.dir})`,
    );
    results.push(result);
  }
  return results;
}

/** `<outDir>/<name>` for a spec name or alias. */
export function modelDir(nameOrAlias: string, outDir: string = DEFAULT_MODELS_DIR): string {
  return join(outDir, findSpec(nameOrAlias).name);
}

/** Generates one model if it is missing or stale; returns its directory. */
export async function ensureModel(nameOrAlias: string, outDir: string = DEFAULT_MODELS_DIR): Promise<string> {
  const [result] = await generateModels({ only: nameOrAlias, outDir });
  return (result as WriteResult).dir;
}
