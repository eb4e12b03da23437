/**
 * CLI: tsx scripts/models/generate.ts [--only tiny|smol|<name>] [--force] [--out DIR]
 * Writes deterministic random Llama test models (Hugging Face layout) into <repo>/models/.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_MODELS_DIR, generateModels } from './generate-models.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    force: { type: 'boolean', default: false },
    out: { type: 'string', default: DEFAULT_MODELS_DIR },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: tsx scripts/models/generate.ts [--only tiny|smol] [--force] [--out DIR]');
} else {
  const t0 = performance.now();
  try {
    await generateModels({
      outDir: values.out,
      force: values.force,
      ...(values.only ? { only: values.only } : {}),
      log: (m) => console.log(m),
    });
    console.log(`done in ${((performance.now() - t0) / 1000).toFixed(2)} s`);
  } catch (e) {
    console.error(`generate: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
