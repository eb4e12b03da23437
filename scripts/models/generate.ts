/**
 * CLI: tsx scripts/models/generate.ts [--only tiny|smol|qwen3|qwen2|llama3|phi3|gemma3|families|<name>[,...]] [--force] [--out DIR]
 * Writes deterministic random test models (Hugging Face layout) into <repo>/models/: random Llama
 * models with a toy tokenizer, and the family models (Qwen3, Qwen2.5, Llama 3.2, Phi-3.5, Gemma 3)
 * with their real tokenizers and chat templates.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_MODELS_DIR, generateModels, knownSpecs } from './generate-models.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    force: { type: 'boolean', default: false },
    out: { type: 'string', default: DEFAULT_MODELS_DIR },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log('usage: tsx scripts/models/generate.ts [--only NAME[,NAME...]]... [--force] [--out DIR]');
  console.log('  --only   spec alias, name or group (comma-separated or repeated); default: all');
  console.log(`           known: ${knownSpecs()}`);
  console.log('  --force  regenerate even when the stamp says the model is up to date');
  console.log('  --out    output directory (default: <repo>/models)');
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
