/**
 * Library entry of the test-model generator: `generateModels()` writes every (or some) spec into
 * `<repo>/models/` (or another directory), skipping models whose stamp is current.
 */
import { join, resolve } from 'node:path';
import { FAMILY_SPECS, type FamilySpec } from './families.ts';
import { GENERATED } from './roots.ts';
import { MODEL_SPECS, type ModelSpec, findSpec } from './specs.ts';
import { writeFamilyModel } from './write-family.ts';
import { type WriteResult, writeModel } from './write-model.ts';

type AnySpec = { kind: 'llama'; spec: ModelSpec } | { kind: 'family'; spec: FamilySpec };

/** Group names accepted by `--only`: 'families' = every family model (families.ts). */
export const MODEL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  families: FAMILY_SPECS.map((s) => s.name),
};

/** Resolves a spec name, alias or group to specs; throws naming the known ones. */
export function resolveSpecs(nameOrAlias: string): AnySpec[] {
  const group = MODEL_GROUPS[nameOrAlias];
  if (group) return group.flatMap(resolveSpecs);
  const fam = FAMILY_SPECS.find((s) => s.name === nameOrAlias || s.alias === nameOrAlias);
  if (fam) return [{ kind: 'family', spec: fam }];
  try {
    const spec = findSpec(nameOrAlias);
    // an Optimum-style spec brings its GQA sibling along ('tiny' → tiny-random-llama, tiny-random-llama-gqa)
    const sibling = spec.gqa ? [] : MODEL_SPECS.filter((s) => s.gqa && s.seed === spec.seed && s.name === `${spec.name}-gqa`);
    return [spec, ...sibling].map((s) => ({ kind: 'llama' as const, spec: s }));
  } catch {
    throw new Error(`unknown model spec "${nameOrAlias}"; known: ${knownSpecs()}`);
  }
}

/** 'alias (name), ...' of every spec and group, for messages and --help. */
export function knownSpecs(): string {
  const all = [...MODEL_SPECS, ...FAMILY_SPECS].map((s) => `${s.alias} (${s.name})`);
  return [...all, ...Object.entries(MODEL_GROUPS).map(([g, names]) => `${g} (${names.join(', ')})`)].join(', ');
}

/** `<repo>/models`, where `npm run models` writes (gitignored). */
export const DEFAULT_MODELS_DIR = GENERATED;

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
  const picked: AnySpec[] = only
    ? only.flatMap((o) => o.split(',')).filter((o) => o !== '').flatMap(resolveSpecs)
    : [...MODEL_SPECS.map((spec) => ({ kind: 'llama' as const, spec })), ...FAMILY_SPECS.map((spec) => ({ kind: 'family' as const, spec }))];
  const seen = new Set<string>();
  const results: WriteResult[] = [];
  for (const entry of picked) {
    const spec = entry.spec;
    if (seen.has(spec.name)) continue;
    seen.add(spec.name);
    const wopts = { force: opts.force ?? false, ...(opts.log ? { log: opts.log } : {}) };
    const result = entry.kind === 'family' ? writeFamilyModel(entry.spec, outDir, wopts) : writeModel(entry.spec, outDir, wopts);
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
  const [first] = resolveSpecs(nameOrAlias);
  return join(outDir, (first as AnySpec).spec.name);
}

/** Generates one model if it is missing or stale; returns its directory. */
export async function ensureModel(nameOrAlias: string, outDir: string = DEFAULT_MODELS_DIR): Promise<string> {
  const [result] = await generateModels({ only: nameOrAlias, outDir });
  return (result as WriteResult).dir;
}
